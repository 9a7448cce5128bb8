//! What several stage programs share that belongs to no library crate: reading the environments
//! a stage plays (`spade-rollout`, `spade-eval --suite envs:…`) from an `envs` or memory table or
//! a folder of seed `.py` files.

pub mod envs;
