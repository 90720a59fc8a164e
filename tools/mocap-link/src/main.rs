//! `mocap-link`: carry mocap datagrams between sites over Zenoh.

fn main() {
    let _ = zenoh::Config::default();
}
