//! The checked, zero-copy view of one SlimeVR datagram ([`parse`]).

use super::{Error, ErrorKind, Field, Result, Warning, WarningKind, kind};
use crate::wire::Cursor;

/// Bytes of the header of a numbered packet: type and packet number.
pub const HEADER_LEN: usize = 12;
/// What the server's handshake answer says after its first byte (then a
/// protocol digit, `" 5"` today).
pub const GREETING: &[u8] = b"Hey OVR =D";

/// One datagram: its packet number, when it has one, and what it carries.
#[derive(Clone, Debug, PartialEq)]
pub struct Packet<'a> {
    /// The packet number; `None` for the two packets the server sends
    /// without one (the handshake answer, the sensor acknowledgement).
    pub number: Option<u64>,
    /// The packet.
    pub message: Message<'a>,
    warnings: Vec<Warning>,
}

/// What a packet carries, by its type. Types both sides use (ping, feature
/// flags) are one variant; a type that means one thing from the tracker and
/// another from the server is told apart by its length (type 1: the server's
/// heartbeat is empty, a legacy rotation is 16 bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Message<'a> {
    /// Type 0: the tracker's heartbeat (an answer to the server's); the
    /// server's discovery broadcast uses it too, numbered 0.
    Heartbeat,
    /// Type 1, empty: the server's heartbeat, every half second.
    ServerHeartbeat,
    /// Types 1 (sensor 0) and 16 (sensor 1): the legacy rotation.
    Rotation {
        /// The sensor the type implies.
        sensor: u8,
        /// `[x, y, z, w]`.
        quat: [f32; 4],
    },
    /// Type 3 from the tracker: who it is (sent every second until the
    /// server answers).
    Handshake(Handshake<'a>),
    /// The server's answer to a handshake: the byte 3 where a type starts,
    /// then a greeting ([`GREETING`]), no number.
    HandshakeAnswer {
        /// The greeting up to its first NUL byte.
        text: &'a [u8],
    },
    /// Type 4: acceleration.
    Accel {
        /// `None` when the sender left it out (owoTrack).
        sensor: Option<u8>,
        /// x, y, z.
        accel: [f32; 3],
    },
    /// Type 10: the server's ping, and the tracker's pong, which is the
    /// ping's bytes sent back.
    Ping {
        /// The server's random id.
        id: i32,
    },
    /// Type 11: a line of the tracker's serial console.
    Serial {
        /// The text as sent.
        text: &'a [u8],
    },
    /// Type 12: the battery.
    Battery {
        /// Volts; `None` in the legacy form that sends only the level.
        volts: Option<f32>,
        /// The level, a fraction from 0 to 1.
        level: f32,
    },
    /// Type 13: a tap on a sensor.
    Tap {
        /// The sensor.
        sensor: u8,
        /// The tap bits.
        value: u8,
    },
    /// Type 14: a sensor's error code.
    SensorError {
        /// The sensor.
        sensor: u8,
        /// The code (the BNO08x's reset reasons).
        code: u8,
    },
    /// Type 15 from the tracker: a sensor's state and kind.
    SensorInfo(SensorInfo),
    /// Type 15 from the server, without a number: a sensor's state
    /// acknowledged.
    SensorAck {
        /// The sensor.
        sensor: u8,
        /// The state acknowledged (0 offline, 1 ok, 2 error).
        status: u8,
    },
    /// Type 17: a sensor's rotation.
    RotationData {
        /// The sensor.
        sensor: u8,
        /// 1 a rotation, 2 a correction.
        data_type: u8,
        /// `[x, y, z, w]`.
        quat: [f32; 4],
        /// The calibration accuracy byte.
        accuracy: u8,
    },
    /// Type 18: the magnetometer's accuracy.
    MagAccuracy {
        /// The sensor.
        sensor: u8,
        /// The accuracy.
        accuracy: f32,
    },
    /// Type 19: Wi-Fi signal strength.
    Signal {
        /// 255: the whole tracker.
        sensor: u8,
        /// RSSI in dBm.
        dbm: i8,
    },
    /// Type 20: a sensor's temperature.
    Temperature {
        /// The sensor.
        sensor: u8,
        /// Degrees Celsius.
        celsius: f32,
    },
    /// Type 21: a button action (2 full reset, 3 yaw reset, 4 mounting
    /// reset, 5 pause).
    UserAction {
        /// The action.
        action: u8,
    },
    /// Type 22: feature flags, bit `n` of byte `n / 8` (the tracker's or
    /// the server's, by direction).
    FeatureFlags {
        /// The packed flags.
        flags: &'a [u8],
    },
    /// Type 23: rotation and acceleration as 16-bit fixed point.
    RotationAccel {
        /// The sensor.
        sensor: u8,
        /// x, y, z, w in Q15 (1.0 is 32768).
        quat: [i16; 4],
        /// x, y, z in 1/128 m/s².
        accel: [i16; 3],
    },
    /// Type 24: a configuration change acknowledged.
    ConfigAck {
        /// The sensor; 255 all.
        sensor: u8,
        /// The configuration changed.
        config: u16,
    },
    /// Type 25 from the server: set a configuration flag.
    SetConfigFlag {
        /// The sensor; 255 all.
        sensor: u8,
        /// The flag.
        flag: u16,
        /// Its new state (0 off).
        state: u8,
    },
    /// Type 26: a flex sensor's level.
    Flex {
        /// The sensor.
        sensor: u8,
        /// The level.
        level: f32,
    },
    /// Type 27: a position.
    Position {
        /// The sensor.
        sensor: u8,
        /// x, y, z.
        pos: [f32; 3],
    },
    /// Types 100 and 101: several packets in one datagram.
    Bundle(Bundle<'a>),
    /// Type 105: the firmware's debug inspection data, not decoded.
    Inspection {
        /// The bytes after the header.
        body: &'a [u8],
    },
    /// Type 200: a protocol change.
    ProtocolChange {
        /// The protocol.
        protocol: u8,
        /// Its version.
        version: u8,
    },
    /// A type no source we read names (or a bundle or handshake inside a
    /// bundle): its number and bytes.
    Unknown {
        /// The type.
        kind: u32,
        /// The bytes after the header.
        body: &'a [u8],
    },
}

/// What a tracker says of itself in its handshake. Every field is optional
/// from the board on, as the server reads it: legacy senders (owoTrack)
/// stop early and send no firmware name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Handshake<'a> {
    /// The board ([`BOARDS`](super::BOARDS)).
    pub board: Option<i32>,
    /// The first sensor's IMU (kept for old servers).
    pub imu: Option<i32>,
    /// The microcontroller ([`MCUS`](super::MCUS)).
    pub mcu: Option<i32>,
    /// Three integers of IMU information, unused (zeros).
    pub imu_info: Option<[i32; 3]>,
    /// The firmware build: the protocol version the server reads.
    pub build: Option<i32>,
    /// The firmware's version string.
    pub firmware: Option<&'a [u8]>,
    /// The Wi-Fi MAC address.
    pub mac: Option<[u8; 6]>,
    /// The tracker type (0 a rotation tracker, 1 and 2 gloves).
    pub tracker_type: Option<u8>,
    /// Vendor name and URL, product name, update address and name
    /// ([`VENDOR_FIELDS`](super::VENDOR_FIELDS)).
    pub vendor: [Option<&'a [u8]>; 5],
}

impl Handshake<'_> {
    /// Whether it is a legacy handshake: no firmware version (the server
    /// then takes it for the old owoTrack protocol).
    pub fn is_legacy(&self) -> bool {
        self.firmware.is_none_or(<[u8]>::is_empty)
    }
}

/// A sensor's state and kind (type 15). The fields after the status are
/// optional, in the order firmware added them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SensorInfo {
    /// The sensor.
    pub sensor: u8,
    /// 0 offline, 1 ok, 2 error.
    pub status: u8,
    /// The IMU ([`IMUS`](super::IMUS)).
    pub imu: Option<u8>,
    /// The sensor's configuration bits.
    pub config: Option<u16>,
    /// Whether rest calibration has completed.
    pub calibrated: Option<u8>,
    /// Where it is worn (the server's body positions).
    pub position: Option<u8>,
    /// 0 rotation, 1 flex resistance, 2 flex angle.
    pub data_type: Option<u8>,
    /// The sensor's ticks and data per second, for debugging.
    pub tps: Option<[f32; 2]>,
}

/// The packets of a bundle, checked by [`parse`]: walking them again
/// cannot fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bundle<'a> {
    /// Type 101: one-byte lengths and types.
    pub compact: bool,
    items: &'a [u8],
    at: usize,
    len: usize,
}

impl<'a> Bundle<'a> {
    /// The packets, in order (empty ones left out).
    pub fn messages(&self) -> impl Iterator<Item = Message<'a>> + 'a {
        let mut c = Cursor::at(self.items, self.at);
        let compact = self.compact;
        std::iter::from_fn(move || item(&mut c, compact, &mut Vec::new()).ok().flatten())
    }

    /// How many packets it holds (empty ones left out).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<'a> Packet<'a> {
    /// The odd values, in wire order.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// The packet type as sent (3 for the handshake answer).
    pub fn kind(&self) -> u32 {
        self.message.kind(false)
    }
}

impl Message<'_> {
    /// Its type number (`compact`: a bundle's, which is 101 then).
    fn kind(&self, compact: bool) -> u32 {
        match *self {
            Self::Heartbeat => kind::HEARTBEAT,
            Self::ServerHeartbeat => kind::SERVER_HEARTBEAT,
            Self::Rotation { sensor, .. } => {
                if sensor == 0 {
                    kind::ROTATION
                } else {
                    kind::ROTATION_2
                }
            }
            Self::Handshake(_) | Self::HandshakeAnswer { .. } => kind::HANDSHAKE,
            Self::Accel { .. } => kind::ACCEL,
            Self::Ping { .. } => kind::PING,
            Self::Serial { .. } => kind::SERIAL,
            Self::Battery { .. } => kind::BATTERY,
            Self::Tap { .. } => kind::TAP,
            Self::SensorError { .. } => kind::ERROR,
            Self::SensorInfo(_) | Self::SensorAck { .. } => kind::SENSOR_INFO,
            Self::RotationData { .. } => kind::ROTATION_DATA,
            Self::MagAccuracy { .. } => kind::MAG_ACCURACY,
            Self::Signal { .. } => kind::SIGNAL,
            Self::Temperature { .. } => kind::TEMPERATURE,
            Self::UserAction { .. } => kind::USER_ACTION,
            Self::FeatureFlags { .. } => kind::FEATURE_FLAGS,
            Self::RotationAccel { .. } => kind::ROTATION_ACCEL,
            Self::ConfigAck { .. } => kind::CONFIG_ACK,
            Self::SetConfigFlag { .. } => kind::SET_CONFIG_FLAG,
            Self::Flex { .. } => kind::FLEX,
            Self::Position { .. } => kind::POSITION,
            Self::Bundle(b) => {
                if b.compact || compact {
                    kind::BUNDLE_COMPACT
                } else {
                    kind::BUNDLE
                }
            }
            Self::Inspection { .. } => kind::INSPECTION,
            Self::ProtocolChange { .. } => kind::PROTOCOL_CHANGE,
            Self::Unknown { kind, .. } => kind,
        }
    }

    /// Its name as records, the dissector and errors print it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Heartbeat | Self::ServerHeartbeat => "heartbeat",
            Self::Rotation { .. } | Self::RotationData { .. } => "rotation",
            Self::Handshake(_) => "handshake",
            Self::HandshakeAnswer { .. } => "handshake answer",
            Self::Accel { .. } => "acceleration",
            Self::Ping { .. } => "ping",
            Self::Serial { .. } => "serial",
            Self::Battery { .. } => "battery",
            Self::Tap { .. } => "tap",
            Self::SensorError { .. } => "sensor error",
            Self::SensorInfo(_) => "sensor info",
            Self::SensorAck { .. } => "sensor ack",
            Self::MagAccuracy { .. } => "magnetometer accuracy",
            Self::Signal { .. } => "signal",
            Self::Temperature { .. } => "temperature",
            Self::UserAction { .. } => "user action",
            Self::FeatureFlags { .. } => "feature flags",
            Self::RotationAccel { .. } => "rotation and acceleration",
            Self::ConfigAck { .. } => "config ack",
            Self::SetConfigFlag { .. } => "set config flag",
            Self::Flex { .. } => "flex",
            Self::Position { .. } => "position",
            Self::Bundle(_) => "bundle",
            Self::Inspection { .. } => "inspection",
            Self::ProtocolChange { .. } => "protocol change",
            Self::Unknown { .. } => "unknown",
        }
    }

    /// Whether its type is one the sources we read name (a bundle: and
    /// every packet in it).
    pub fn is_known(&self) -> bool {
        match self {
            Self::Unknown { .. } => false,
            Self::Bundle(b) => b.messages().all(|m| m.is_known()),
            _ => true,
        }
    }
}

/// Reads one datagram of either direction.
///
/// # Errors
/// [`ErrorKind::Empty`] for no bytes, [`ErrorKind::Truncated`] at the
/// offset of the first field that is cut: the header, a packet's fields, a
/// bundle's packet.
pub fn parse(datagram: &[u8]) -> Result<Packet<'_>> {
    let mut warnings = Vec::new();
    let Some((&first, rest)) = datagram.split_first() else {
        return Err(Error::new(0, Field::Type, ErrorKind::Empty));
    };
    if u32::from(first) == kind::HANDSHAKE {
        // The answer starts with its type in one byte, where every other
        // packet's four-byte type starts with zeros.
        let text = rest.split(|b| *b == 0).next().unwrap_or_default();
        return Ok(Packet {
            number: None,
            message: Message::HandshakeAnswer { text },
            warnings,
        });
    }
    let mut c = Cursor::new(datagram);
    let kind = c.u32_be(Field::Type)?;
    if kind == kind::SENSOR_INFO && datagram.len() < HEADER_LEN {
        let name = "sensor ack";
        let (sensor, status) = (c.u8(Field::Body(name))?, c.u8(Field::Body(name))?);
        trailing(&c, name, &mut warnings);
        return Ok(Packet {
            number: None,
            message: Message::SensorAck { sensor, status },
            warnings,
        });
    }
    let number = u64::from_be_bytes(c.array(Field::Number)?);
    let message = message(kind, &mut c, false, &mut warnings)?;
    Ok(Packet {
        number: Some(number),
        message,
        warnings,
    })
}

/// A warning for what is left in `c` after a packet's fields.
fn trailing(c: &Cursor<'_>, name: &'static str, warnings: &mut Vec<Warning>) {
    if !c.is_empty() {
        warnings.push(Warning::new(
            c.offset(),
            Field::Body(name),
            WarningKind::Trailing { bytes: c.len() },
        ));
    }
}

fn floats<const N: usize>(c: &mut Cursor<'_>, name: &'static str) -> Result<[f32; N]> {
    let mut out = [0.0; N];
    for v in &mut out {
        *v = c.f32_be(Field::Body(name))?;
    }
    Ok(out)
}

/// One optional field: absent when nothing is left, else read whole.
fn optional<'a, T>(
    c: &mut Cursor<'a>,
    read: impl FnOnce(&mut Cursor<'a>) -> Result<T>,
) -> Result<Option<T>> {
    if c.is_empty() {
        Ok(None)
    } else {
        read(c).map(Some)
    }
}

/// A packet's fields after its header, `c` over exactly its bytes.
fn message<'a>(
    kind: u32,
    c: &mut Cursor<'a>,
    in_bundle: bool,
    warnings: &mut Vec<Warning>,
) -> Result<Message<'a>> {
    let m = match kind {
        kind::HEARTBEAT => Message::Heartbeat,
        kind::SERVER_HEARTBEAT if c.is_empty() => Message::ServerHeartbeat,
        kind::ROTATION | kind::ROTATION_2 => Message::Rotation {
            sensor: u8::from(kind == kind::ROTATION_2),
            quat: floats(c, "rotation")?,
        },
        kind::HANDSHAKE if !in_bundle => Message::Handshake(handshake(c)?),
        kind::ACCEL => {
            let accel = floats(c, "acceleration")?;
            let sensor = optional(c, |c| c.u8(Field::Body("acceleration")))?;
            Message::Accel { sensor, accel }
        }
        kind::PING => Message::Ping {
            id: c.i32_be(Field::Body("ping"))?,
        },
        kind::SERIAL => {
            let n = c.u32_be(Field::Body("serial"))?;
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            Message::Serial {
                text: c.bytes(n, Field::Body("serial"))?,
            }
        }
        kind::BATTERY => {
            let [first] = floats(c, "battery")?;
            let second = optional(c, |c| c.f32_be(Field::Body("battery")))?;
            let (volts, level) = match second {
                Some(level) => (Some(first), level),
                None => (None, first),
            };
            if !(0.0..=1.0).contains(&level) {
                let at = c.offset().saturating_sub(4);
                warnings.push(Warning::new(
                    at,
                    Field::Body("battery"),
                    WarningKind::BatteryLevel,
                ));
            }
            Message::Battery { volts, level }
        }
        kind::TAP => Message::Tap {
            sensor: c.u8(Field::Body("tap"))?,
            value: c.u8(Field::Body("tap"))?,
        },
        kind::ERROR => Message::SensorError {
            sensor: c.u8(Field::Body("sensor error"))?,
            code: c.u8(Field::Body("sensor error"))?,
        },
        kind::SENSOR_INFO => Message::SensorInfo(sensor_info(c)?),
        kind::ROTATION_DATA => {
            let f = Field::Body("rotation");
            Message::RotationData {
                sensor: c.u8(f)?,
                data_type: c.u8(f)?,
                quat: floats(c, "rotation")?,
                accuracy: c.u8(f)?,
            }
        }
        kind::MAG_ACCURACY => Message::MagAccuracy {
            sensor: c.u8(Field::Body("magnetometer accuracy"))?,
            accuracy: c.f32_be(Field::Body("magnetometer accuracy"))?,
        },
        kind::SIGNAL => Message::Signal {
            sensor: c.u8(Field::Body("signal"))?,
            dbm: c.u8(Field::Body("signal"))?.cast_signed(),
        },
        kind::TEMPERATURE => Message::Temperature {
            sensor: c.u8(Field::Body("temperature"))?,
            celsius: c.f32_be(Field::Body("temperature"))?,
        },
        kind::USER_ACTION => Message::UserAction {
            action: c.u8(Field::Body("user action"))?,
        },
        kind::FEATURE_FLAGS => Message::FeatureFlags { flags: c.rest() },
        kind::ROTATION_ACCEL => {
            let f = Field::Body("rotation and acceleration");
            let sensor = c.u8(f)?;
            let mut q = [0i16; 7];
            for v in &mut q {
                *v = i16::from_be_bytes(c.array(f)?);
            }
            let [x, y, z, w, ax, ay, az] = q;
            Message::RotationAccel {
                sensor,
                quat: [x, y, z, w],
                accel: [ax, ay, az],
            }
        }
        kind::CONFIG_ACK => Message::ConfigAck {
            sensor: c.u8(Field::Body("config ack"))?,
            config: c.u16_be(Field::Body("config ack"))?,
        },
        kind::SET_CONFIG_FLAG => Message::SetConfigFlag {
            sensor: c.u8(Field::Body("set config flag"))?,
            flag: c.u16_be(Field::Body("set config flag"))?,
            state: c.u8(Field::Body("set config flag"))?,
        },
        kind::FLEX => Message::Flex {
            sensor: c.u8(Field::Body("flex"))?,
            level: c.f32_be(Field::Body("flex"))?,
        },
        kind::POSITION => Message::Position {
            sensor: c.u8(Field::Body("position"))?,
            pos: floats(c, "position")?,
        },
        kind::BUNDLE | kind::BUNDLE_COMPACT if !in_bundle => {
            Message::Bundle(bundle(c, kind == kind::BUNDLE_COMPACT, warnings)?)
        }
        kind::INSPECTION => Message::Inspection { body: c.rest() },
        kind::PROTOCOL_CHANGE => Message::ProtocolChange {
            protocol: c.u8(Field::Body("protocol change"))?,
            version: c.u8(Field::Body("protocol change"))?,
        },
        _ => Message::Unknown {
            kind,
            body: c.rest(),
        },
    };
    trailing(c, m.name(), warnings);
    Ok(m)
}

fn handshake<'a>(c: &mut Cursor<'a>) -> Result<Handshake<'a>> {
    let f = Field::Body("handshake");
    let int = |c: &mut Cursor<'a>| c.i32_be(f);
    let short_string = |c: &mut Cursor<'a>| {
        let n = c.u8(f)?;
        c.bytes(usize::from(n), f)
    };
    let mut h = Handshake {
        board: optional(c, int)?,
        imu: optional(c, int)?,
        mcu: optional(c, int)?,
        imu_info: optional(c, |c| Ok([int(c)?, int(c)?, int(c)?]))?,
        build: optional(c, int)?,
        firmware: optional(c, short_string)?,
        mac: optional(c, |c| c.array(f))?,
        tracker_type: optional(c, |c| c.u8(f))?,
        vendor: [None; 5],
    };
    for v in &mut h.vendor {
        *v = optional(c, short_string)?;
    }
    Ok(h)
}

fn sensor_info(c: &mut Cursor<'_>) -> Result<SensorInfo> {
    let f = Field::Body("sensor info");
    Ok(SensorInfo {
        sensor: c.u8(f)?,
        status: c.u8(f)?,
        imu: optional(c, |c| c.u8(f))?,
        config: optional(c, |c| c.u16_be(f))?,
        calibrated: optional(c, |c| c.u8(f))?,
        position: optional(c, |c| c.u8(f))?,
        data_type: optional(c, |c| c.u8(f))?,
        tps: optional(c, |c| Ok([c.f32_be(f)?, c.f32_be(f)?]))?,
    })
}

/// Checks every packet of a bundle (`c` over what follows its header).
fn bundle<'a>(
    c: &mut Cursor<'a>,
    compact: bool,
    warnings: &mut Vec<Warning>,
) -> Result<Bundle<'a>> {
    let at = c.offset();
    let mut walk = *c;
    let mut len = 0;
    while item(&mut walk, compact, warnings)?.is_some() {
        len += 1;
    }
    Ok(Bundle {
        compact,
        items: c.rest(),
        at,
        len,
    })
}

/// The next packet of a bundle: `None` at its end; an empty one is skipped
/// with a warning, as the server skips it.
fn item<'a>(
    c: &mut Cursor<'a>,
    compact: bool,
    warnings: &mut Vec<Warning>,
) -> Result<Option<Message<'a>>> {
    loop {
        if c.is_empty() {
            return Ok(None);
        }
        let at = c.offset();
        let n = if compact {
            usize::from(c.u8(Field::Length)?)
        } else {
            usize::from(c.u16_be(Field::Length)?)
        };
        if n == 0 {
            warnings.push(Warning::new(at, Field::Length, WarningKind::EmptyInBundle));
            continue;
        }
        let mut inner = c.take(n, Field::Body("bundle"))?;
        let kind = if compact {
            u32::from(inner.u8(Field::Type)?)
        } else {
            inner.u32_be(Field::Type)?
        };
        return message(kind, &mut inner, true, warnings).map(Some);
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        reason = "test code: a panic is how a test reports"
    )]

    use super::*;

    /// A datagram that outlives the test (views borrow it).
    fn numbered(kind: u32, number: u64, body: &[u8]) -> &'static [u8] {
        let mut d = kind.to_be_bytes().to_vec();
        d.extend(number.to_be_bytes());
        d.extend(body);
        d.leak()
    }

    fn rotation(sensor: u8, q: [f32; 4]) -> Vec<u8> {
        let mut b = vec![sensor, 1];
        for v in q {
            b.extend(v.to_be_bytes());
        }
        b.push(3);
        b
    }

    #[test]
    fn a_rotation_decodes_and_a_cut_one_is_refused_at_its_offset() {
        let d = numbered(17, 42, &rotation(1, [0.0, 0.5, -0.5, 0.70710677]));
        let p = parse(d).unwrap();
        assert_eq!(p.number, Some(42));
        assert_eq!(
            p.message,
            Message::RotationData {
                sensor: 1,
                data_type: 1,
                quat: [0.0, 0.5, -0.5, 0.70710677],
                accuracy: 3
            }
        );
        assert_eq!(p.warnings(), []);
        let e = parse(&d[..d.len() - 2]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "truncated: need 4 bytes, have 3 at offset 26 in `rotation`"
        );
        let e = parse(&d[..7]).unwrap_err();
        assert_eq!((e.offset, e.field), (4, Field::Number));
        assert_eq!(parse(&[]).unwrap_err().kind, ErrorKind::Empty);
        let mut long = d.to_vec();
        long.push(0);
        let w: Vec<String> = parse(&long)
            .unwrap()
            .warnings()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            w,
            ["1 bytes after the last field at offset 31 in `rotation`"]
        );
    }

    #[test]
    fn a_bundle_holds_its_packets_and_a_cut_one_is_refused() {
        let mut body = Vec::new();
        for s in [0u8, 1] {
            let mut inner = 17u32.to_be_bytes().to_vec();
            inner.extend(rotation(s, [0.0, 0.0, 0.0, 1.0]));
            body.extend(u16::try_from(inner.len()).unwrap().to_be_bytes());
            body.extend(inner);
        }
        body.extend([0, 0]); // an empty one, skipped
        let d = numbered(100, 7, &body);
        let p = parse(d).unwrap();
        let Message::Bundle(b) = p.message else {
            panic!("{:?}", p.message)
        };
        assert_eq!(b.len(), 2);
        let sensors: Vec<u8> = b
            .messages()
            .map(|m| match m {
                Message::RotationData { sensor, .. } => sensor,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(sensors, [0, 1]);
        assert_eq!(
            p.warnings()[0].to_string(),
            "empty packet in a bundle at offset 62 in `length`"
        );
        assert!(p.message.is_known());
        // The second packet cut: its length overruns the datagram.
        let e = parse(&d[..d.len() - 5]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "truncated: need 23 bytes, have 20 at offset 39 in `bundle`"
        );
        // A bundle inside a bundle is a packet of unknown type there.
        let mut nested = 100u32.to_be_bytes().to_vec();
        nested.extend([0, 0]);
        let mut outer = u16::try_from(nested.len()).unwrap().to_be_bytes().to_vec();
        outer.extend(nested);
        let p = parse(numbered(100, 8, &outer)).unwrap();
        assert!(!p.message.is_known());
    }

    #[test]
    fn both_directions_are_told_apart() {
        let mut answer = vec![3];
        answer.extend(b"Hey OVR =D 5");
        answer.resize(64, 0);
        assert_eq!(
            parse(&answer).unwrap().message,
            Message::HandshakeAnswer {
                text: b"Hey OVR =D 5"
            }
        );
        assert_eq!(
            parse(numbered(1, 0, &[])).unwrap().message,
            Message::ServerHeartbeat
        );
        let ack = parse(&[0, 0, 0, 15, 1, 1]).unwrap();
        assert_eq!(
            (ack.number, ack.message),
            (
                None,
                Message::SensorAck {
                    sensor: 1,
                    status: 1
                }
            )
        );
        let info = parse(numbered(15, 3, &[1, 1, 12])).unwrap();
        assert!(matches!(
            info.message,
            Message::SensorInfo(SensorInfo {
                sensor: 1,
                imu: Some(12),
                config: None,
                ..
            })
        ));
        let p = parse(numbered(19, 9, &[255, (-61i8).cast_unsigned()])).unwrap();
        assert_eq!(
            p.message,
            Message::Signal {
                sensor: 255,
                dbm: -61
            }
        );
        let p = parse(numbered(77, 9, &[1, 2, 3])).unwrap();
        assert_eq!(
            p.message,
            Message::Unknown {
                kind: 77,
                body: &[1, 2, 3]
            }
        );
    }

    #[test]
    fn a_handshake_reads_what_it_has() {
        let mut body = Vec::new();
        for v in [9i32, 12, 2, 0, 0, 0, 22] {
            body.extend(v.to_be_bytes());
        }
        body.push(5);
        body.extend(b"0.6.3");
        body.extend([0x3c, 0x61, 0x05, 0x12, 0x34, 0x56]);
        let p = parse(numbered(3, 0, &body)).unwrap();
        let Message::Handshake(h) = p.message else {
            panic!()
        };
        assert_eq!((h.board, h.mcu, h.build), (Some(9), Some(2), Some(22)));
        assert_eq!(h.firmware, Some(&b"0.6.3"[..]));
        assert_eq!(h.mac, Some([0x3c, 0x61, 0x05, 0x12, 0x34, 0x56]));
        assert_eq!((h.tracker_type, h.vendor), (None, [None; 5]));
        assert!(!h.is_legacy());
        // owoTrack's: board, IMU and MCU only.
        let Message::Handshake(h) = parse(numbered(3, 0, &body[..12])).unwrap().message else {
            panic!()
        };
        assert!(h.is_legacy() && h.build.is_none());
        // A version string longer than what is left is cut.
        let e = parse(numbered(3, 0, &body[..33])).unwrap_err();
        assert_eq!((e.offset, e.field), (41, Field::Body("handshake")));
    }

    #[test]
    fn battery_in_both_forms() {
        let mut b = 3.9f32.to_be_bytes().to_vec();
        b.extend(0.75f32.to_be_bytes());
        let m = parse(numbered(12, 1, &b)).unwrap().message;
        assert_eq!(
            m,
            Message::Battery {
                volts: Some(3.9),
                level: 0.75
            }
        );
        let p = parse(numbered(12, 1, &75f32.to_be_bytes())).unwrap();
        assert_eq!(
            p.message,
            Message::Battery {
                volts: None,
                level: 75.0
            }
        );
        assert_eq!(p.warnings()[0].kind, WarningKind::BatteryLevel);
    }
}
