//! SlimeVR's tracker protocol: IMU trackers (an ESP board each) and the
//! SlimeVR server, UDP port 6969 both ends.
//!
//! Big-endian. A packet is a four-byte type, an eight-byte packet number,
//! then the type's fields ([`Message`]). The tracker numbers its packets
//! from 0 at power-on, one number per datagram; its handshake carries 0
//! and takes none, and the server numbers nothing (always 0). The tracker
//! sends its handshake every second until the server answers with the byte
//! 3 and `Hey OVR =D 5` (no number), and only then streams: rotations for
//! each sensor (type 17), bundled into one datagram (type 100: a two-byte
//! length before each packet, packets without numbers) once the server's
//! feature flags say it reads bundles; battery, signal strength and
//! temperature on their own. The server sends a heartbeat (type 1) and a
//! ping (type 10) every half second; the tracker answers the heartbeat with
//! its own (type 0) and sends the ping's bytes back. A sensor's state
//! (type 15) is acknowledged by the server with the type and two bytes, no
//! number. See `docs/slimevr.md`.
//!
//! # No-panic contract
//! [`parse`] never panics, whatever the bytes. It refuses only an empty
//! datagram and one whose fields are cut (the header, a packet's fields, a
//! bundle's packet), with an [`Error`] naming the offset and field. A type
//! no source names decodes as [`Message::Unknown`] (type and bytes). Bytes
//! after a packet's fields, an empty packet in a bundle, and a battery level
//! that is not a fraction are [`Warning`]s on a packet that still decodes.
//!
//! ```
//! use mocap_core::slimevr::{self, Message};
//!
//! // Type 19 (signal strength), packet 7, the whole tracker (255), −61 dBm.
//! let d = [0, 0, 0, 19, 0, 0, 0, 0, 0, 0, 0, 7, 255, 0xc3];
//! let p = slimevr::parse(&d)?;
//! assert_eq!(p.number, Some(7));
//! assert_eq!(p.message, Message::Signal { sensor: 255, dbm: -61 });
//! assert!(slimevr::parse(&d[..13]).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod answer;
mod error;
mod packet;
mod spec;

pub use answer::{Answerer, FORGET, HEARTBEAT, MAX_QUEUED, MAX_TRACKERS, handshake_answer};
pub use error::{Error, ErrorKind, Field, Result, Warning, WarningKind};
pub use packet::{Bundle, GREETING, HEADER_LEN, Handshake, Message, Packet, SensorInfo, parse};
pub use spec::SPEC;

/// UDP port the server listens on (and the tracker sends from).
pub const DEFAULT_PORT: u16 = 6969;

/// The packet types, as the firmware's `packets.h` and the server's
/// `UDPProtocolParser` number them.
pub mod kind {
    /// The tracker's heartbeat; the server's discovery broadcast.
    pub const HEARTBEAT: u32 = 0;
    /// The legacy rotation of sensor 0 (from a tracker).
    pub const ROTATION: u32 = 1;
    /// The server's heartbeat (empty; the same number as [`ROTATION`]).
    pub const SERVER_HEARTBEAT: u32 = 1;
    /// The handshake (and the first byte of the server's answer).
    pub const HANDSHAKE: u32 = 3;
    /// Acceleration.
    pub const ACCEL: u32 = 4;
    /// Ping, and the tracker's pong (its bytes sent back).
    pub const PING: u32 = 10;
    /// A serial console line.
    pub const SERIAL: u32 = 11;
    /// Battery voltage and level.
    pub const BATTERY: u32 = 12;
    /// A tap.
    pub const TAP: u32 = 13;
    /// A sensor's error.
    pub const ERROR: u32 = 14;
    /// A sensor's state (and the server's acknowledgement of it).
    pub const SENSOR_INFO: u32 = 15;
    /// The legacy rotation of sensor 1.
    pub const ROTATION_2: u32 = 16;
    /// A sensor's rotation.
    pub const ROTATION_DATA: u32 = 17;
    /// The magnetometer's accuracy.
    pub const MAG_ACCURACY: u32 = 18;
    /// Wi-Fi signal strength.
    pub const SIGNAL: u32 = 19;
    /// A sensor's temperature.
    pub const TEMPERATURE: u32 = 20;
    /// A button action.
    pub const USER_ACTION: u32 = 21;
    /// Feature flags, both ways.
    pub const FEATURE_FLAGS: u32 = 22;
    /// Rotation and acceleration in fixed point.
    pub const ROTATION_ACCEL: u32 = 23;
    /// A configuration change acknowledged.
    pub const CONFIG_ACK: u32 = 24;
    /// The server sets a configuration flag.
    pub const SET_CONFIG_FLAG: u32 = 25;
    /// A flex sensor.
    pub const FLEX: u32 = 26;
    /// A position.
    pub const POSITION: u32 = 27;
    /// Several packets, two-byte lengths and four-byte types.
    pub const BUNDLE: u32 = 100;
    /// Several packets, one-byte lengths and types.
    pub const BUNDLE_COMPACT: u32 = 101;
    /// The firmware's debug inspection data.
    pub const INSPECTION: u32 = 105;
    /// A protocol change.
    pub const PROTOCOL_CHANGE: u32 = 200;
}

/// Board names by the handshake's board number (`consts.h`).
pub const BOARDS: [&str; 24] = [
    "unknown",
    "SlimeVR legacy",
    "SlimeVR dev",
    "NodeMCU",
    "custom",
    "WROOM32",
    "Wemos D1 mini",
    "TTGO T-Base",
    "ESP-01",
    "SlimeVR",
    "Lolin C3 mini",
    "Beetle32 C3",
    "ESP32-C3 DevKitM-1",
    "owoTrack",
    "Wrangler",
    "mocopi",
    "Wemos WROOM-02",
    "XIAO ESP32C3",
    "Haritora",
    "ESP32-C6 DevKitC-1",
    "glove IMU SlimeVR dev",
    "Gestures",
    "SlimeVR v1.2",
    "ESP32-S3 SuperMini",
];

/// Microcontroller names by the handshake's MCU number.
pub const MCUS: [&str; 9] = [
    "unknown",
    "ESP8266",
    "ESP32",
    "owoTrack Android",
    "Wrangler",
    "owoTrack iOS",
    "ESP32-C3",
    "mocopi",
    "Haritora",
];

/// IMU names by the sensor type number (sensor info, handshake).
pub const IMUS: [&str; 19] = [
    "unknown",
    "MPU9250",
    "MPU6500",
    "BNO080",
    "BNO085",
    "BNO055",
    "MPU6050",
    "BNO086",
    "BMI160",
    "ICM20948",
    "ICM42688",
    "BMI270",
    "LSM6DS3TR-C",
    "LSM6DSV",
    "LSM6DSO",
    "LSM6DSR",
    "ICM45686",
    "ICM45605",
    "ADC resistance",
];

/// The handshake's vendor strings, in wire order.
pub const VENDOR_FIELDS: [&str; 5] = [
    "vendor name",
    "vendor url",
    "product name",
    "update address",
    "update name",
];

/// The name of entry `id` of `table`, if it has one.
pub fn name_of(table: &[&'static str], id: i64) -> Option<&'static str> {
    usize::try_from(id).ok().and_then(|i| table.get(i)).copied()
}
