//! One module per `csm` subcommand. Each exposes a clap `Args` struct and a
//! `run` function returning `anyhow::Result<()>`; errors are printed by the
//! binary as `error: <reason>` with exit code 1.

pub mod demo;
pub mod gen;
pub mod matching;
pub mod sample;
pub mod stream;
pub mod sweep;
pub mod verify;
