//! Shared helpers for tests that need the real default model.

use std::path::PathBuf;

/// The default model fetched by `scripts/fetch-model.sh`, or None (the test then skips, saying so).
pub fn default_model() -> Option<PathBuf> {
    let p = spade_model::default_model_path();
    if p.exists() {
        Some(p)
    } else {
        eprintln!(
            "SKIPPED: default model not found at {} — run scripts/fetch-model.sh (make fetches it) or set {}",
            p.display(),
            spade_model::MODEL_ENV
        );
        None
    }
}
