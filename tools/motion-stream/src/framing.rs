//! `.dlp3d` files: responses as protobuf's length-delimited messages.

use std::io::{self, Read, Write};

use mocap_core::dlp3d;

/// Writes one message with its varint length first (protobuf's
/// length-delimited framing).
///
/// # Errors
/// Write errors.
pub(crate) fn write_delimited(w: &mut impl Write, m: &[u8]) -> io::Result<()> {
    let mut len = Vec::with_capacity(10);
    dlp3d::encode_length(m.len() as u64, &mut len);
    w.write_all(&len)?;
    w.write_all(m)
}

/// Reads one length-delimited message; `None` at a clean end of file.
///
/// # Errors
/// I/O errors, a bad length, a truncated message.
pub(crate) fn read_delimited(r: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut len: u64 = 0;
    for i in 0..10 {
        let mut b = [0u8; 1];
        if r.read(&mut b)? == 0 {
            return if i == 0 {
                Ok(None)
            } else {
                Err(io::ErrorKind::UnexpectedEof.into())
            };
        }
        len |= u64::from(b[0] & 0x7f) << (7 * i);
        if b[0] & 0x80 == 0 {
            if len > 64 * 1024 * 1024 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("a {len}-byte message"),
                ));
            }
            let mut m = vec![0u8; usize::try_from(len).map_err(io::Error::other)?];
            r.read_exact(&mut m)?;
            return Ok(Some(m));
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        "length varint too long",
    ))
}
