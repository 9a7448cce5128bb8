//! Hardening applied inside a forked child before it loads untrusted code, and the probes
//! the worker runs once at start-up.
//!
//! Order in the child (after `setsid` and `chdir` to its scratch folder, done by the
//! driver): parent-death signal, rlimits, `oom_score_adj`, landlock (when the host has it),
//! no-new-privs and not dumpable, then seccomp. Mandatory layers (rlimits, seccomp) fail the
//! job when they cannot be applied; optional ones are reported.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What a child applies; sent by the library in each spawn request (`config`), completed
/// by the worker with `scratch` and `ro_paths`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChildConfig {
    pub memory_bytes: u64,
    pub cpu_seconds: u64,
    pub file_size_bytes: u64,
    pub open_files: u64,
    pub nproc: u64,
    /// Use landlock when the kernel supports it.
    pub landlock: bool,
    #[serde(default)]
    pub scratch: String,
    #[serde(default)]
    pub ro_paths: Vec<String>,
    /// The fork server's pid as the child sees it (1 in the sandbox's PID namespace); 0: unknown.
    #[serde(default)]
    pub parent_pid: i32,
}

/// Layers applied in one child (returned to the driver; informational).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ChildReport {
    pub landlock: String,
    pub seccomp: bool,
    pub deny_writes: bool,
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn set_rlimit(res: libc::__rlimit_resource_t, soft: u64, hard: u64) -> Result<(), String> {
    let lim = libc::rlimit { rlim_cur: soft as libc::rlim_t, rlim_max: hard as libc::rlim_t };
    // SAFETY: plain syscall with a valid pointer.
    if unsafe { libc::setrlimit(res, &lim) } != 0 {
        return Err(format!("setrlimit({res}): {}", errno()));
    }
    Ok(())
}

/// Apply every layer to the calling (single-threaded, freshly forked) process.
pub fn apply(cfg: &ChildConfig) -> Result<ChildReport, String> {
    let mut report = ChildReport::default();
    // SAFETY: prctl/getppid are plain syscalls.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
        // the fork server died before the death signal was armed
        let ppid = libc::getppid();
        if (cfg.parent_pid > 0 && ppid != cfg.parent_pid) || (cfg.parent_pid == 0 && ppid == 1) {
            libc::_exit(71);
        }
    }
    set_rlimit(libc::RLIMIT_CORE, 0, 0)?;
    set_rlimit(libc::RLIMIT_AS, cfg.memory_bytes, cfg.memory_bytes)?;
    set_rlimit(libc::RLIMIT_CPU, cfg.cpu_seconds, cfg.cpu_seconds + 1)?;
    set_rlimit(libc::RLIMIT_FSIZE, cfg.file_size_bytes, cfg.file_size_bytes)?;
    set_rlimit(libc::RLIMIT_NOFILE, cfg.open_files, cfg.open_files)?;
    // Ignored for root, effective for ordinary users; seccomp's fork ban is what counts.
    set_rlimit(libc::RLIMIT_NPROC, cfg.nproc, cfg.nproc)?;
    let _ = std::fs::write("/proc/self/oom_score_adj", "1000");

    report.landlock = if cfg.landlock && landlock_abi() > 0 { apply_landlock(cfg)? } else { "off".to_string() };
    let fs_confined = report.landlock.starts_with("fully") || report.landlock.starts_with("partially");
    // SAFETY: prctl with constant arguments.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(format!("no_new_privs: {}", errno()));
        }
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    drop_capabilities()?;
    report.deny_writes = !fs_confined;
    apply_seccomp(!fs_confined)?;
    report.seccomp = true;
    Ok(report)
}

fn apply_landlock(cfg: &ChildConfig) -> Result<String, String> {
    use landlock::{path_beneath_rules, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI};
    let abi = ABI::V6;
    let run = || -> Result<RulesetStatus, landlock::RulesetError> {
        let ruleset = Ruleset::default()
            .handle_access(AccessFs::from_all(abi))?
            .handle_access(AccessNet::from_all(abi))?
            .scope(Scope::from_all(abi))?
            .create()?
            .add_rules(path_beneath_rules(&cfg.ro_paths, AccessFs::from_read(abi)))?
            .add_rules(path_beneath_rules([cfg.scratch.as_str(), "/dev/null"], AccessFs::from_all(abi)))?;
        Ok(ruleset.restrict_self()?.ruleset)
    };
    match run() {
        Ok(RulesetStatus::FullyEnforced) => Ok("fully enforced".into()),
        Ok(RulesetStatus::PartiallyEnforced) => Ok("partially enforced".into()),
        Ok(RulesetStatus::NotEnforced) => Ok("not enforced".into()),
        Err(e) => Err(format!("landlock: {e}")),
    }
}

/// Drop every capability (root children could otherwise raise their own hard rlimits).
fn drop_capabilities() -> Result<(), String> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let mut hdr = Header { version: 0x2008_0522, pid: 0 };
    let data = [Data { effective: 0, permitted: 0, inheritable: 0 }; 2];
    for cap in 0..64 {
        // SAFETY: dropping from the bounding set; EINVAL past the last capability is fine.
        unsafe {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
    }
    // SAFETY: header and two data structs as capset(2) expects for version 3.
    let r = unsafe { libc::syscall(libc::SYS_capset, &mut hdr as *mut Header, data.as_ptr()) };
    if r != 0 {
        return Err(format!("capset: {}", errno()));
    }
    Ok(())
}

/// The landlock ABI version the kernel offers (0: none).
pub fn landlock_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the version query takes no ruleset and allocates nothing.
    let v = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<libc::c_void>(), 0usize, LANDLOCK_CREATE_RULESET_VERSION) };
    if v < 0 {
        0
    } else {
        v
    }
}

/// Whether the kernel offers seccomp filters.
pub fn seccomp_available() -> bool {
    // SAFETY: PR_GET_SECCOMP has no side effects.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

fn build_filter(rules: Vec<(i64, Vec<seccompiler::SeccompRule>)>, errno: u32) -> Result<seccompiler::BpfProgram, String> {
    use seccompiler::{SeccompAction, SeccompFilter, TargetArch};
    let arch: TargetArch = std::env::consts::ARCH.try_into().map_err(|e| format!("seccomp arch: {e:?}"))?;
    let mut map: BTreeMap<i64, Vec<seccompiler::SeccompRule>> = BTreeMap::new();
    for (nr, r) in rules {
        map.entry(nr).or_default().extend(r);
    }
    let filter = SeccompFilter::new(map, SeccompAction::Allow, SeccompAction::Errno(errno), arch).map_err(|e| format!("seccomp filter: {e}"))?;
    filter.try_into().map_err(|e: seccompiler::BackendError| format!("seccomp compile: {e}"))
}

fn cond(arg: u8, op: seccompiler::SeccompCmpOp, value: u64) -> seccompiler::SeccompRule {
    use seccompiler::{SeccompCmpArgLen, SeccompCondition, SeccompRule};
    let len = match op {
        seccompiler::SeccompCmpOp::MaskedEq(_) => SeccompCmpArgLen::Qword,
        _ => SeccompCmpArgLen::Dword,
    };
    SeccompRule::new(vec![SeccompCondition::new(arg, len, op, value).expect("valid condition")]).expect("valid rule")
}

/// A rule that matches when argument `arg` (a pid or id) is none of `allowed`.
fn not_in(arg: u8, allowed: &[u64]) -> seccompiler::SeccompRule {
    use seccompiler::{SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompRule};
    let conds = allowed.iter().map(|&v| SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, v).expect("valid condition")).collect();
    SeccompRule::new(conds).expect("valid rule")
}

// Newer than the libc crate's tables; the numbers are the same on every 64-bit architecture.
const SYS_SETXATTRAT: i64 = 463;
const SYS_REMOVEXATTRAT: i64 = 466;
const SYS_FILE_SETATTR: i64 = 469;

/// Install the seccomp filters (two: EPERM for denied calls, ENOSYS for calls whose
/// arguments a filter cannot inspect, so libc falls back to an inspectable one).
fn apply_seccomp(deny_writes: bool) -> Result<(), String> {
    use seccompiler::SeccompCmpOp::{MaskedEq, Ne};
    // SAFETY: getpid has no side effects.
    let me = unsafe { libc::getpid() } as u64;
    let mut deny: Vec<(i64, Vec<seccompiler::SeccompRule>)> = Vec::new();
    let always: &[i64] = &[
        libc::SYS_execve,
        libc::SYS_execveat,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_pidfd_open,
        libc::SYS_pidfd_send_signal,
        libc::SYS_pidfd_getfd,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_reboot,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_acct,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_sethostname,
        libc::SYS_setdomainname,
        libc::SYS_quotactl,
        libc::SYS_syslog,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_mknodat,
        libc::SYS_fanotify_init,
        libc::SYS_kcmp,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_process_madvise,
        libc::SYS_migrate_pages,
        libc::SYS_move_pages,
        libc::SYS_personality,
        libc::SYS_vhangup,
        libc::SYS_setpgid,
        libc::SYS_setsid,
        libc::SYS_ioprio_set,
        libc::SYS_process_mrelease,
        // sockets: none made, bound or connected (the episode's channel is inherited), so no host
        // daemon behind a socket file, no abstract name another episode can find, no network
        libc::SYS_socket,
        libc::SYS_socketpair,
        libc::SYS_bind,
        libc::SYS_connect,
        libc::SYS_listen,
        libc::SYS_accept,
        libc::SYS_accept4,
        // System V and POSIX message IPC: names shared by every process of the IPC namespace
        libc::SYS_shmget,
        libc::SYS_shmat,
        libc::SYS_shmdt,
        libc::SYS_shmctl,
        libc::SYS_semget,
        libc::SYS_semop,
        libc::SYS_semtimedop,
        libc::SYS_semctl,
        libc::SYS_msgget,
        libc::SYS_msgsnd,
        libc::SYS_msgrcv,
        libc::SYS_msgctl,
        libc::SYS_mq_open,
        libc::SYS_mq_unlink,
        libc::SYS_mq_timedsend,
        libc::SYS_mq_timedreceive,
        libc::SYS_mq_notify,
        libc::SYS_mq_getsetattr,
        // file metadata, anywhere (landlock has no right for it): mode, owner, times, attributes
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        libc::SYS_fchmodat2,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_utimensat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        SYS_SETXATTRAT,
        SYS_REMOVEXATTRAT,
        SYS_FILE_SETATTR,
    ];
    for &nr in always {
        deny.push((nr, vec![]));
    }
    #[cfg(target_arch = "x86_64")]
    for nr in [
        libc::SYS_fork,
        libc::SYS_vfork,
        libc::SYS_iopl,
        libc::SYS_ioperm,
        libc::SYS_uselib,
        libc::SYS_mknod,
        // the metadata calls x86_64 has besides the *at ones
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
    ] {
        deny.push((nr, vec![]));
    }
    // new processes: only threads (CLONE_THREAD set) may be cloned
    deny.push((libc::SYS_clone, vec![cond(0, MaskedEq(libc::CLONE_THREAD as u64), 0)]));
    // signals: only to itself
    for nr in [libc::SYS_kill, libc::SYS_tkill, libc::SYS_tgkill, libc::SYS_rt_sigqueueinfo, libc::SYS_rt_tgsigqueueinfo] {
        deny.push((nr, vec![cond(0, Ne, me)]));
    }
    // other processes' limits and scheduling: only its own (pid 0 or its pid)
    for (nr, arg) in [
        (libc::SYS_prlimit64, 0),
        (libc::SYS_setpriority, 1),
        (libc::SYS_sched_setaffinity, 0),
        (libc::SYS_sched_setparam, 0),
        (libc::SYS_sched_setscheduler, 0),
        (libc::SYS_sched_setattr, 0),
    ] {
        deny.push((nr, vec![not_in(arg, &[0, me])]));
    }
    if deny_writes {
        // No landlock: forbid creating, modifying or removing files anywhere (already-open
        // descriptors such as the capped stdout stay usable).
        let wflags = [libc::O_WRONLY, libc::O_RDWR, libc::O_CREAT, libc::O_TRUNC, libc::O_APPEND];
        let rules = |arg: u8| wflags.iter().map(|&f| cond(arg, MaskedEq(f as u64), f as u64)).collect::<Vec<_>>();
        deny.push((libc::SYS_openat, rules(2)));
        #[cfg(target_arch = "x86_64")]
        {
            deny.push((libc::SYS_open, rules(1)));
            for nr in [libc::SYS_creat, libc::SYS_unlink, libc::SYS_rename, libc::SYS_mkdir, libc::SYS_rmdir, libc::SYS_link, libc::SYS_symlink] {
                deny.push((nr, vec![]));
            }
        }
        for nr in [
            libc::SYS_unlinkat,
            libc::SYS_renameat,
            libc::SYS_renameat2,
            libc::SYS_mkdirat,
            libc::SYS_linkat,
            libc::SYS_symlinkat,
            libc::SYS_truncate,
        ] {
            deny.push((nr, vec![]));
        }
    }
    let eperm = build_filter(deny, libc::EPERM as u32)?;
    let nosys = build_filter(vec![(libc::SYS_clone3, vec![]), (libc::SYS_openat2, vec![])], libc::ENOSYS as u32)?;
    seccompiler::apply_filter(&eperm).map_err(|e| format!("seccomp: {e}"))?;
    seccompiler::apply_filter(&nosys).map_err(|e| format!("seccomp: {e}"))?;
    Ok(())
}

/// Put the calling process (the worker, before Python starts) in fresh network, IPC, UTS and
/// mount namespaces (no network but loopback, its own System V names and hostname, mounts of its
/// own) and, where the host allows, a fresh PID namespace for its children (see [`pid_init`]),
/// directly or inside a user namespace. Returns what it did: `pid+net+ipc+uts+mnt (unshare)`,
/// `… (userns)`, `net+ipc+uts+mnt (…)` without the PID namespace, or `unavailable (…)`. The
/// file-system view is [`private_view`]'s, once the worker knows which paths its Python needs.
pub fn enter_namespaces() -> String {
    const WHICH: libc::c_int = libc::CLONE_NEWNET | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS | libc::CLONE_NEWNS;
    // SAFETY: getuid/getgid have no side effects.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let mut first = None;
    for (pid, name) in [(libc::CLONE_NEWPID, "pid+net+ipc+uts+mnt"), (0, "net+ipc+uts+mnt")] {
        // SAFETY: unshare on the single-threaded worker at start-up.
        if unsafe { libc::unshare(WHICH | pid) } == 0 {
            return format!("{name} (unshare)");
        }
        first.get_or_insert_with(errno);
        // SAFETY: as above.
        if unsafe { libc::unshare(libc::CLONE_NEWUSER | WHICH | pid) } == 0 {
            let _ = std::fs::write("/proc/self/setgroups", "deny");
            let _ = std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"));
            let _ = std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"));
            return format!("{name} (userns)");
        }
    }
    format!("unavailable ({})", first.expect("tried"))
}

/// After [`enter_namespaces`] made a PID namespace: fork its first process, which becomes the
/// namespace's init and the fork server, and returns here; the calling process stays outside,
/// closes `ctrl_fd`, waits, and exits with the inner one's status (it is what the stage started
/// and kills). The inner one dies with it (parent-death signal), and when the inner one ends the
/// kernel kills every process left in the namespace, so no episode outlives its worker. The
/// inner one mounts a fresh `/proc` that shows the namespace's processes only; returns how that
/// went (`own /proc` or `host /proc (…)`), or an error when the fork failed.
pub fn pid_init(ctrl_fd: i32) -> Result<String, String> {
    let mut p = [0; 2];
    // SAFETY: p points to two ints.
    if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("pipe: {}", errno()));
    }
    // SAFETY: the worker is single-threaded here (Python is not started yet).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", errno()));
    }
    if pid > 0 {
        // SAFETY: closing our copies; waitpid on our own child.
        unsafe {
            libc::close(p[0]);
            libc::close(ctrl_fd);
            let mut st = 0;
            loop {
                let r = libc::waitpid(pid, &mut st, 0);
                if r == pid || (r < 0 && *libc::__errno_location() != libc::EINTR) {
                    break;
                }
            }
            let code = if libc::WIFEXITED(st) { libc::WEXITSTATUS(st) } else { 128 + libc::WTERMSIG(st) };
            libc::_exit(code);
        }
    }
    // SAFETY: prctl and close with constant or owned arguments; poll on one valid pollfd.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
        libc::close(p[1]);
        // the outer process holds the write end until it exits: a hang-up means it already has
        let mut fd = libc::pollfd { fd: p[0], events: libc::POLLIN, revents: 0 };
        if libc::poll(&mut fd, 1, 0) > 0 && fd.revents & libc::POLLHUP != 0 {
            libc::_exit(1);
        }
        libc::close(p[0]);
    }
    // no mount of ours may propagate to the host's namespace: private first (as private_view does)
    let root = std::path::Path::new("/");
    let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    let mounted = mount(None, root, None, libc::MS_REC | libc::MS_PRIVATE, None)
        .and_then(|()| mount(Some("proc"), std::path::Path::new("/proc"), Some("proc"), proc_flags, None));
    Ok(match mounted {
        Ok(()) => "own /proc".to_string(),
        Err(e) => format!("host /proc ({e})"),
    })
}

/// `struct mount_attr` of mount_setattr(2).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

fn cstr(p: &std::path::Path) -> std::io::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
}

fn mount(src: Option<&str>, target: &std::path::Path, fstype: Option<&str>, flags: libc::c_ulong, data: Option<&str>) -> std::io::Result<()> {
    let c = |s: Option<&str>| s.map(|s| std::ffi::CString::new(s).expect("no NUL"));
    let (src, fstype, data) = (c(src), c(fstype), c(data));
    let target = cstr(target)?;
    let ptr = |s: &Option<std::ffi::CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: NUL-terminated strings or null, as mount(2) takes them.
    let r = unsafe { libc::mount(ptr(&src), target.as_ptr(), ptr(&fstype), flags, ptr(&data).cast()) };
    if r != 0 {
        return Err(errno());
    }
    Ok(())
}

/// Set or clear read-only on the mount at `path` (and, with `recursive`, every mount below it).
fn set_readonly(path: &std::path::Path, readonly: bool, recursive: bool) -> std::io::Result<()> {
    const MOUNT_ATTR_RDONLY: u64 = 0x1;
    let attr = MountAttr {
        attr_set: if readonly { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if readonly { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let p = cstr(path)?;
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 };
    // SAFETY: a valid path and a mount_attr of the size passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            p.as_ptr(),
            flags as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r != 0 {
        return Err(errno());
    }
    Ok(())
}

/// The worker's view of the file system, in its own mount namespace ([`enter_namespaces`]): no
/// propagation to the host, fresh tmpfs `/tmp`, `/var/tmp` and `/dev/shm`, everything else
/// read-only but `scratch_root`. Paths in `keep` (what the worker's Python reads: its `sys.path`,
/// prefixes) that lie under those temp folders are carried over, read-only.
pub fn private_view(scratch_root: &std::path::Path, keep: &[String]) -> std::io::Result<()> {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::path::{Path, PathBuf};
    mount(None, Path::new("/"), None, libc::MS_REC | libc::MS_PRIVATE, None)?;
    let temps: Vec<&Path> = ["/tmp", "/var/tmp", "/dev/shm"].iter().map(Path::new).filter(|p| p.is_dir()).collect();
    // what to carry over: existing paths under a temp folder, outermost only
    let mut carry: Vec<PathBuf> =
        keep.iter().map(PathBuf::from).filter(|p| p.exists() && temps.iter().any(|t| p.starts_with(t) && p.as_path() != *t)).collect();
    carry.sort();
    carry.dedup();
    let carry: Vec<PathBuf> = carry.iter().filter(|p| !carry.iter().any(|q| q != *p && p.starts_with(q))).cloned().collect();
    let mut trees = Vec::new();
    for p in &carry {
        const OPEN_TREE_CLONE: libc::c_uint = 1;
        let c = cstr(p)?;
        // SAFETY: open_tree(2) with a valid path; the returned descriptor is owned below.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_open_tree,
                libc::AT_FDCWD,
                c.as_ptr(),
                OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | libc::AT_RECURSIVE as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(errno());
        }
        // SAFETY: a fresh descriptor from open_tree.
        trees.push((p, p.is_dir(), unsafe { OwnedFd::from_raw_fd(fd as i32) }));
    }
    for t in &temps {
        mount(Some("tmpfs"), t, Some("tmpfs"), libc::MS_NOSUID | libc::MS_NODEV, Some("size=1g,mode=1777"))?;
    }
    for (p, dir, fd) in &trees {
        const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
        if *dir {
            std::fs::create_dir_all(p)?;
        } else {
            std::fs::create_dir_all(p.parent().unwrap_or(Path::new("/")))?;
            std::fs::write(p, b"")?;
        }
        let c = cstr(p)?;
        let empty = std::ffi::CString::new("").expect("no NUL");
        use std::os::fd::AsRawFd;
        // SAFETY: move_mount(2) of a detached tree onto a folder just made.
        let r = unsafe { libc::syscall(libc::SYS_move_mount, fd.as_raw_fd(), empty.as_ptr(), libc::AT_FDCWD, c.as_ptr(), MOVE_MOUNT_F_EMPTY_PATH) };
        if r != 0 {
            return Err(errno());
        }
    }
    // the scratch root: in a fresh temp folder, or a bind of itself
    let in_temp = temps.iter().any(|t| scratch_root.starts_with(t));
    std::fs::create_dir_all(scratch_root)?;
    if !in_temp {
        mount(scratch_root.to_str(), scratch_root, None, libc::MS_BIND | libc::MS_REC, None)?;
    }
    set_readonly(Path::new("/"), true, true)?;
    let writable: Vec<&Path> = if in_temp { temps.clone() } else { temps.iter().copied().chain([scratch_root]).collect() };
    for w in writable {
        if let Err(e) = set_readonly(w, false, false) {
            let _ = set_readonly(Path::new("/"), false, true);
            return Err(e);
        }
    }
    Ok(())
}
