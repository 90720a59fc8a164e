//! `mocap-top`: every mocap stream arriving on this machine, live, in one terminal.

mod content;
mod state;
mod window;

fn main() {}
