//! Pins the libpython that `spade-sandbox-worker` (which embeds CPython through pyo3) was
//! built against: without an rpath, a run from a clean shell may load the system's
//! libpython of the same soname instead (DESIGN, "Facts measured").

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PYO3_PYTHON");
    let cfg = pyo3_build_config::get();
    if let Some(dir) = cfg.lib_dir() {
        println!("cargo:rustc-link-arg-bin=spade-sandbox-worker=-Wl,--disable-new-dtags,-rpath,{dir}");
    }
}
