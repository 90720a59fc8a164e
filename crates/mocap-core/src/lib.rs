//! Motion-capture network protocols, I/O-free.
//!
//! Every module is pure: it takes bytes, events and `now`, and returns
//! views, values, actions or errors; it never touches sockets, clocks, the
//! terminal or the file system, and never panics on any input. Sockets, the
//! run loop and the command-line glue of the tools are in the `mocap-cli`
//! crate.
//!
//! - [`ifm`]: iFacialMocap / Facemotion3d face streams (UDP 49983, TCP 49986).
//! - [`smf`]: Sony mocopi's motion stream (UDP 12351).
//! - [`livelink`]: Epic's Live Link Face app (UDP 11111).
//! - [`openseeface`]: OpenSeeFace's face tracking stream (UDP 11573).
//! - [`vtubestudio`]: VTube Studio's phone tracking, asked for and sent as JSON (UDP 21412).
//! - [`slimevr`]: SlimeVR's IMU trackers and server (UDP 6969).
//! - [`rokoko`]: Rokoko Studio Live's suit actors, body and face, JSON or LZ4 (UDP 14043).
//! - [`health`]: loss, duplicates, reordering, restarts, rate and jitter of a numbered frame stream.
//! - [`pcap`]: capture files in and out, fragment reassembly, replay scheduling.
//! - [`osc`]: OSC 1.0 through rosc, guarded against deep nesting and leftovers.
//! - [`vmc`]: typed VMC messages, name tables, frame encoder.
//! - [`bridge`]: tracker frames turned into VMC (iFacialMocap face, mocopi body).
//! - [`dlp3d`]: DLP3D's motion/face/audio stream (protobuf over WebSocket).
//! - [`figure`]: a body frame as a stick figure, front and side views fitted to a box.
//! - [`quat`]: the quaternion arithmetic the bridges and DLP3D share.
//! - [`textcap`]: datagrams written as hex text (hex lines, mocopi packet captures).
//! - [`protocol`]: the registry of protocols: names, default ports, content sniffs.
//! - [`filekind`]: what an input file holds, from its first bytes.
//! - [`wire`]: what the binary protocol modules share: located errors and warnings, a read cursor.
#![warn(missing_docs, clippy::print_stdout, clippy::print_stderr)]

pub mod bridge;
pub mod bvh;
pub mod dlp3d;
pub mod figure;
pub mod filekind;
pub mod filter;
pub mod health;
pub mod ifm;
pub mod json;
pub mod livelink;
pub mod openseeface;
pub mod osc;
pub mod pcap;
pub mod protocol;
pub mod quat;
pub mod rokoko;
pub mod slimevr;
pub mod smf;
pub mod textcap;
pub mod vmc;
pub mod vtubestudio;
pub mod wire;

/// The largest UDP payload, 65 535 bytes: a receive buffer this big never
/// cuts a datagram, and no text line may describe a longer one.
pub const MAX_DATAGRAM: usize = 65_535;
