//! Structure checks that run before `rosc`, iteratively, so no input can make
//! the decoder recurse deeply.

use super::{Error, ErrorKind, MAX_DEPTH};

pub(super) const BUNDLE_TAG: &[u8; 8] = b"#bundle\0";

/// Checks bundle sizes and nesting, and array nesting in type tags.
pub(super) fn structure(bytes: &[u8]) -> Result<(), Error> {
    // (element bytes, offset in the datagram, bundle depth)
    let mut stack: Vec<(&[u8], usize, usize)> = vec![(bytes, 0, 0)];
    while let Some((elem, at, depth)) = stack.pop() {
        if !elem.starts_with(BUNDLE_TAG) {
            message_tags(elem, at)?;
            continue;
        }
        if depth >= MAX_DEPTH {
            return Err(Error::at(ErrorKind::TooDeep, at));
        }
        // Tag and timetag, then size-prefixed elements.
        let mut pos = 16;
        while pos < elem.len() {
            let size = elem
                .get(pos..pos + 4)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .map(i32::from_be_bytes)
                .ok_or_else(|| Error::at(ErrorKind::BadSize, at + pos))?;
            let size =
                usize::try_from(size).map_err(|_| Error::at(ErrorKind::BadSize, at + pos))?;
            let start = pos + 4;
            let inner = elem
                .get(start..start.saturating_add(size))
                .ok_or_else(|| Error::at(ErrorKind::BadSize, at + pos))?;
            stack.push((inner, at + start, depth + 1));
            pos = start + size;
        }
    }
    Ok(())
}

/// Refuses type-tag strings whose arrays nest deeper than [`MAX_DEPTH`].
fn message_tags(msg: &[u8], at: usize) -> Result<(), Error> {
    // Address: up to the first NUL, padded to 4; then the type tags.
    let Some(end) = msg.iter().position(|&b| b == 0) else {
        return Ok(());
    };
    let tags_at = (end + 4) & !3;
    let Some(tags) = msg.get(tags_at..) else {
        return Ok(());
    };
    let mut depth = 0usize;
    for &b in tags.iter().take_while(|&&b| b != 0) {
        match b {
            b'[' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(Error::at(ErrorKind::TooDeep, at + tags_at));
                }
            }
            b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}
