//! An optional system BLAS for the f32 linear layers on the CPU, loaded at run time.
//!
//! candle's own GEMM (the `gemm` crate) runs AVX2/FMA kernels on stable Rust; OpenBLAS, which
//! Debian's `libopenblas0-pthread` provides (and the PyTorch peer of `make bench` uses), has
//! AVX-512 kernels and ran the model's linear-layer shapes ~1.45× faster at one thread here. The
//! library is opened with `dlopen`, so nothing is needed at build time and a machine without it
//! runs candle's GEMM: same math, to float rounding.
//!
//! `SPADE_BLAS`: the library to open (a path or a soname), or `off` for candle's GEMM; default
//! `libopenblas.so.0`. Its thread count is set to the compute threads (`--threads`).
//!
//! OpenBLAS picks its kernels from the CPU's model number when it is loaded, and a model it does
//! not know gets its SSE3 kernels ("Prescott"): Debian's 0.3.21 on an Emerald Rapids Xeon (family
//! 6, model 207, AVX-512) did, and the warm-up ran more than 5× slower than with its AVX-512 kernels.
//! So unless `OPENBLAS_CORETYPE` is set, it is set from the engine's instruction-set level before
//! the library is loaded ([`openblas_coretype`]); [`active`] names the kernels OpenBLAS reports.

use std::sync::OnceLock;

/// The environment variable naming the BLAS library (or `off`).
pub const BLAS_ENV: &str = "SPADE_BLAS";

/// `cblas_sgemm(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)`.
type Sgemm = unsafe extern "C" fn(i32, i32, i32, i32, i32, i32, f32, *const f32, i32, *const f32, i32, f32, *mut f32, i32);

pub(crate) struct Blas {
    name: String,
    sgemm: Sgemm,
    _lib: libloading::Library,
}

const ROW_MAJOR: i32 = 101;
const NO_TRANS: i32 = 111;
const TRANS: i32 = 112;

static BLAS: OnceLock<Option<Blas>> = OnceLock::new();

/// The loaded BLAS, if any (opened on first use).
pub(crate) fn blas() -> Option<&'static Blas> {
    BLAS.get_or_init(open).as_ref()
}

/// The BLAS library the linear layers run on, or `None` for candle's GEMM.
pub fn active() -> Option<&'static str> {
    blas().map(|b| b.name.as_str())
}

fn open() -> Option<Blas> {
    let explicit = std::env::var(BLAS_ENV).ok().filter(|v| !v.is_empty());
    let name = explicit.clone().unwrap_or_else(|| "libopenblas.so.0".into());
    if name == "off" {
        return None;
    }
    if std::env::var_os(CORETYPE_ENV).is_none() {
        if let Some(core) = openblas_coretype() {
            // OpenBLAS reads it in its initialiser, when the library is loaded just below. This runs
            // once, at the first linear layer, before the compute threads read the environment.
            std::env::set_var(CORETYPE_ENV, core);
        }
    }
    // SAFETY: loading a BLAS runs its initialisers, which only set up its own state; the
    // symbols are looked up with their C signatures.
    let loaded = unsafe {
        libloading::Library::new(&name).and_then(|lib| {
            let sgemm = *lib.get::<Sgemm>(b"cblas_sgemm\0")?;
            if let Ok(set) = lib.get::<unsafe extern "C" fn(i32)>(b"openblas_set_num_threads\0") {
                set(candle_core::utils::get_num_threads() as i32);
            }
            let mut shown = name.clone();
            if let Ok(core) = lib.get::<unsafe extern "C" fn() -> *const std::ffi::c_char>(b"openblas_get_corename\0") {
                let p = core();
                if !p.is_null() {
                    shown = format!("{name} ({})", std::ffi::CStr::from_ptr(p).to_string_lossy());
                }
            }
            Ok(Blas { name: shown, sgemm, _lib: lib })
        })
    };
    match loaded {
        Ok(b) => Some(b),
        Err(e) => {
            if explicit.is_some() {
                tracing::warn!("{BLAS_ENV}={name}: cannot load it ({e}); the linear layers run on candle's GEMM");
            }
            None
        }
    }
}

/// OpenBLAS's variable naming the kernels it runs (instead of the ones it picks by CPU model).
pub const CORETYPE_ENV: &str = "OPENBLAS_CORETYPE";

/// The OpenBLAS kernels of the engine's instruction-set level ([`crate::kernels::isa`], which
/// `SPADE_ISA` forces down): `SkylakeX` at `avx512` (with AVX-512 DQ/VL/CD too), `Haswell` at `avxvnni` and `avx2`,
/// none (OpenBLAS's own pick) at `scalar` and off x86-64.
pub fn openblas_coretype() -> Option<&'static str> {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::kernels::Isa;
        use std::is_x86_feature_detected as has;
        match crate::kernels::isa() {
            Isa::Avx512 if has!("avx512dq") && has!("avx512vl") && has!("avx512cd") => Some("SkylakeX"),
            Isa::Avx512 | Isa::AvxVnni | Isa::Avx2 => Some("Haswell"),
            _ => None,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

impl Blas {
    /// `c = op(a) · op(b)`, row-major: `a` is `(m, k)` (`(k, m)` when `ta`), `b` is `(k, n)`
    /// (`(n, k)` when `tb`), `c` is `(m, n)`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sgemm(&self, ta: bool, tb: bool, m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
        assert!(a.len() == m * k && b.len() == k * n && c.len() == m * n, "sgemm: slice lengths do not match the shape");
        let lda = if ta { m } else { k };
        let ldb = if tb { k } else { n };
        // SAFETY: the slices hold exactly the matrices (checked above).
        unsafe { self.sgemm_strided((ta, tb), (m, n, k), 1.0, (a, lda), (b, ldb), 0.0, (c, n)) }
    }

    /// `c = alpha · op(a) · op(b) + beta · c` with leading dimensions.
    ///
    /// # Safety
    /// Every element the dimensions and leading dimensions reach must lie inside the slices
    /// ([`crate::blocks::check_bounds`] checks it).
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn sgemm_strided(
        &self,
        (ta, tb): (bool, bool),
        (m, n, k): (usize, usize, usize),
        alpha: f32,
        (a, lda): (&[f32], usize),
        (b, ldb): (&[f32], usize),
        beta: f32,
        (c, ldc): (&mut [f32], usize),
    ) {
        assert!(m.max(n).max(k).max(lda).max(ldb).max(ldc) <= i32::MAX as usize, "sgemm: dimension too large");
        let t = |x: bool| if x { TRANS } else { NO_TRANS };
        // SAFETY: the caller guarantees the bounds (see above).
        unsafe {
            (self.sgemm)(
                ROW_MAJOR,
                t(ta),
                t(tb),
                m as i32,
                n as i32,
                k as i32,
                alpha,
                a.as_ptr(),
                lda.max(1) as i32,
                b.as_ptr(),
                ldb.max(1) as i32,
                beta,
                c.as_mut_ptr(),
                ldc.max(1) as i32,
            )
        }
    }
}
