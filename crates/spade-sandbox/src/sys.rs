//! Small libc helpers: socket pairs, fd passing, poll with deadlines.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Instant;

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

pub fn socketpair(ty: libc::c_int) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds points to two ints.
    cvt(unsafe { libc::socketpair(libc::AF_UNIX, ty | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) })?;
    // SAFETY: both fds are fresh and owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds points to two ints.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: both fds are fresh and owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

pub fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on an fd we own.
    unsafe {
        let fl = cvt(libc::fcntl(fd, libc::F_GETFL))?;
        cvt(libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK))?;
    }
    Ok(())
}

/// Send one SEQPACKET message, optionally with file descriptors.
pub fn send_msg(sock: &OwnedFd, data: &[u8], fds: &[RawFd]) -> io::Result<()> {
    let mut iov = libc::iovec { iov_base: data.as_ptr() as *mut libc::c_void, iov_len: data.len() };
    let fd_bytes = std::mem::size_of_val(fds) as u32;
    // SAFETY: CMSG_SPACE is a pure computation.
    let space = if fds.is_empty() { 0 } else { (unsafe { libc::CMSG_SPACE(fd_bytes) }) as usize };
    let mut cbuf = vec![0u64; space.div_ceil(8)];
    // SAFETY: msghdr is plain data; we fill every field we use.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !fds.is_empty() {
        msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = space as _;
        // SAFETY: the control buffer is large enough for one header with `fds`.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(fd_bytes) as _;
            std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(cmsg) as *mut RawFd, fds.len());
        }
    }
    loop {
        // SAFETY: msg points to valid buffers for the duration of the call.
        let r = unsafe { libc::sendmsg(sock.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
        if r >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Wait until `fd` is readable or the deadline passes (`Ok(false)`).
pub fn wait_readable(fd: RawFd, deadline: Instant) -> io::Result<bool> {
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Ok(false);
        }
        let ms = (deadline - now).as_millis().clamp(1, i32::MAX as u128) as i32;
        let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut p, 1, ms) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if r > 0 {
            return Ok(true);
        }
    }
}

/// Receive one SEQPACKET message before the deadline (file descriptors sent with it are closed).
pub fn recv_msg(sock: &OwnedFd, deadline: Instant) -> io::Result<Vec<u8>> {
    recv_msg_fds(sock, deadline).map(|(m, _)| m)
}

/// Receive one SEQPACKET message and up to 4 file descriptors sent with it (close-on-exec).
pub fn recv_msg_fds(sock: &OwnedFd, deadline: Instant) -> io::Result<(Vec<u8>, Vec<OwnedFd>)> {
    const MAX_FDS: usize = 4;
    if !wait_readable(sock.as_raw_fd(), deadline)? {
        return Err(io::Error::new(io::ErrorKind::TimedOut, "worker did not answer in time"));
    }
    let mut buf = vec![0u8; 1 << 16];
    // SAFETY: CMSG_SPACE is a pure computation.
    let space = unsafe { libc::CMSG_SPACE((MAX_FDS * std::mem::size_of::<RawFd>()) as u32) } as usize;
    let mut cbuf = vec![0u64; space.div_ceil(8)];
    loop {
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
        // SAFETY: msghdr is plain data; we fill every field we use.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = space as _;
        // SAFETY: msg points to valid buffers for the duration of the call.
        let r = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let mut fds = Vec::new();
        // SAFETY: walking the control messages the kernel wrote into cbuf; each SCM_RIGHTS
        // descriptor is fresh and owned here.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                    let n = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / std::mem::size_of::<RawFd>();
                    let data = libc::CMSG_DATA(cmsg) as *const RawFd;
                    for i in 0..n {
                        fds.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
                    }
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
        }
        if r == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "worker closed its control socket"));
        }
        buf.truncate(r as usize);
        return Ok((buf, fds));
    }
}

/// The pid, in this process's PID namespace, of the process a pidfd refers to
/// (`/proc/self/fdinfo`); `None` when it is gone or not visible here.
pub fn pidfd_pid(fd: &OwnedFd) -> Option<i32> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).ok()?;
    info.lines().find_map(|l| l.strip_prefix("Pid:")).and_then(|v| v.trim().parse().ok()).filter(|&p: &i32| p > 0)
}

/// Send `sig` to the process a pidfd refers to (works across PID namespaces, never hits a reused pid).
pub fn pidfd_kill(fd: &OwnedFd, sig: libc::c_int) {
    // SAFETY: plain syscall on a pidfd we own.
    unsafe {
        libc::syscall(libc::SYS_pidfd_send_signal, fd.as_raw_fd(), sig, std::ptr::null::<libc::siginfo_t>(), 0);
    }
}

pub fn kill(pid: i32, sig: libc::c_int) {
    if pid > 1 {
        // SAFETY: plain syscall; pid is one of our unreaped grandchildren.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}
