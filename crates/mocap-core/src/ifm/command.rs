//! The strings a PC sends to the phone, and the ports involved: one place.

use super::{Error, ErrorKind};

/// The phone listens for commands on this UDP port (iFacialMocap).
pub const PHONE_PORT: u16 = 49983;
/// Facemotion3d listens for its start command on this UDP port.
pub const FM_PHONE_PORT: u16 = 49993;
/// The phone streams UDP frames to this PC port.
pub const PC_UDP_PORT: u16 = 49983;
/// In TCP mode the phone connects to this PC port. (The vendor's English page
/// says 49896, a typo: every implementation and the vendor's v3 text use 49986.)
pub const PC_TCP_PORT: u16 = 49986;
/// The phone sends a baked recording to this PC TCP port.
pub const PC_BAKE_PORT: u16 = 49987;
/// Ends each frame on TCP, and a recording.
pub const TERMINATOR: &str = "___iFacialMocap";

const KEY: &str = "sahuasouryya9218sauhuiayeta91555dy3719";
const V2_SUFFIX: &str = "|sendDataVersion=v2";

/// Which frame layout the phone sends, and a frame is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Version {
    /// `name-value` (values 0–100): what the phone sends unless asked.
    #[default]
    V1,
    /// `name&value` (values may be negative or above 100): asked for with
    /// `|sendDataVersion=v2`, and what Facemotion3d sends.
    V2,
}

/// What a PC can ask the phone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Stream one UDP datagram per frame to the sender's address, port 49983.
    StartUdp {
        /// The frame layout asked for.
        version: Version,
    },
    /// Connect to the sender on TCP 49986 and stream frames ending in [`TERMINATOR`].
    StartTcp {
        /// The frame layout asked for.
        version: Version,
    },
    /// Stop the TCP stream.
    StopTcp,
    /// Send the recorded animation to TCP 49987.
    Bake,
    /// Re-centre ("Look Forward" button).
    LookForward,
    /// Facemotion3d's start command (to phone port 49993).
    FacemotionStart,
}

impl Command {
    /// The exact text to send (UTF-8, no terminator).
    pub fn text(self) -> String {
        let suffix = |v: Version| match v {
            Version::V1 => "",
            Version::V2 => V2_SUFFIX,
        };
        match self {
            Self::StartUdp { version } => format!("iFacialMocap_{KEY}{}", suffix(version)),
            Self::StartTcp { version } => format!("iFacialMocap_UDPTCP_{KEY}{}", suffix(version)),
            Self::StopTcp => format!("iFacialMocap_UDPTCPSTOP_{KEY}"),
            Self::Bake => "iFacialMocap_bakeRecordedAnimation_start".to_owned(),
            Self::LookForward => "iFacialMocap_lookForward".to_owned(),
            Self::FacemotionStart => "FACEMOTION3D_OtherStreaming".to_owned(),
        }
    }

    /// The phone's UDP port for this command.
    pub fn phone_port(self) -> u16 {
        match self {
            Self::FacemotionStart => FM_PHONE_PORT,
            _ => PHONE_PORT,
        }
    }

    /// Reads a command datagram (for phone emulators and for dropping our own
    /// commands looped back to us).
    ///
    /// # Errors
    /// [`ErrorKind::Empty`], [`ErrorKind::NotUtf8`], or [`ErrorKind::NotACommand`] for
    /// text that is none of the commands.
    pub fn parse(bytes: &[u8]) -> Result<Self, Error> {
        if bytes.is_empty() {
            return Err(ErrorKind::Empty.into());
        }
        let text = std::str::from_utf8(bytes).map_err(|e| Error::not_utf8(e.valid_up_to()))?;
        [
            Self::StartUdp {
                version: Version::V1,
            },
            Self::StartUdp {
                version: Version::V2,
            },
            Self::StartTcp {
                version: Version::V1,
            },
            Self::StartTcp {
                version: Version::V2,
            },
            Self::StopTcp,
            Self::Bake,
            Self::LookForward,
            Self::FacemotionStart,
        ]
        .into_iter()
        .find(|c| c.text() == text)
        .ok_or_else(|| ErrorKind::NotACommand.into())
    }
}

/// Whether a datagram is a command (any app's) rather than a frame.
pub fn is_command(bytes: &[u8]) -> bool {
    bytes.starts_with(b"iFacialMocap_") || bytes.starts_with(b"FACEMOTION3D_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_a_command_says_why() {
        assert_eq!(Command::parse(b""), Err(ErrorKind::Empty.into()));
        assert_eq!(
            Command::parse(b"iFacialMocap_\xff"),
            Err(Error::not_utf8(13))
        );
        assert_eq!(
            Command::parse(b"iFacialMocap_lookforward"),
            Err(ErrorKind::NotACommand.into())
        );
        assert_eq!(
            Command::parse(b"FACEMOTION3D_OtherStreaming"),
            Ok(Command::FacemotionStart)
        );
    }

    #[test]
    fn command_strings_are_the_vendors() {
        assert_eq!(
            Command::StartUdp {
                version: Version::V1
            }
            .text(),
            "iFacialMocap_sahuasouryya9218sauhuiayeta91555dy3719"
        );
        assert_eq!(
            Command::StartUdp {
                version: Version::V2
            }
            .text(),
            "iFacialMocap_sahuasouryya9218sauhuiayeta91555dy3719|sendDataVersion=v2"
        );
        assert_eq!(
            Command::StartTcp {
                version: Version::V1
            }
            .text(),
            "iFacialMocap_UDPTCP_sahuasouryya9218sauhuiayeta91555dy3719"
        );
        assert_eq!(
            Command::StopTcp.text(),
            "iFacialMocap_UDPTCPSTOP_sahuasouryya9218sauhuiayeta91555dy3719"
        );
        assert_eq!(Command::FacemotionStart.phone_port(), 49993);
        for c in [
            Command::Bake,
            Command::LookForward,
            Command::StartTcp {
                version: Version::V2,
            },
        ] {
            assert_eq!(Command::parse(c.text().as_bytes()), Ok(c));
            assert!(is_command(c.text().as_bytes()));
        }
        assert!(!is_command(b"trackingStatus-1|"));
    }
}
