//! Z85 (ZeroMQ base-85), as Delta uses it for inline DVs and `u` DV UUIDs.
//!
//! Every 4 input bytes, read as a big-endian u32 `V`, become 5 characters
//! `c0..c4` with `V = c0·85⁴ + c1·85³ + c2·85² + c3·85 + c4`. Delta's encoder
//! zero-pads input whose length is not a multiple of 4; the reader keeps only
//! the bytes it needs (`sizeInBytes` for inline DVs).
//!
//! Some writers (those using the Rust `z85` crate, e.g. the table
//! `cdf-table-with-dv` at version 5) pad differently: a final group holding
//! `n < 4` bytes is written as `4 - n` `#` characters followed by the `n + 1`
//! digits of those bytes' big-endian value (`##093` is the two bytes `03 00`).
//! A group that starts with `#` is never valid standard Z85 (`#` is digit 84
//! and 84·85⁴ > u32::MAX), so reading such a final group this way is
//! unambiguous; it decodes to `n` bytes.

/// The alphabet, indexed by digit value 0..85.
const ALPHABET: &[u8; 85] =
    b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/// Reverse lookup: ASCII byte -> digit value, 0xFF for "not in the alphabet".
const DIGITS: [u8; 256] = {
    let mut table = [0xFF_u8; 256];
    let mut i = 0;
    while i < ALPHABET.len() {
        table[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// Why a Z85 string did not decode; the caller attaches the DV's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Z85Error {
    /// Index of the offending character (the length, for a length error).
    pub(crate) position: usize,
    /// What was wrong.
    pub(crate) reason: &'static str,
}

/// Encodes `bytes`, zero-padding the last group to 4 bytes as Delta does.
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(4) * 5);
    for chunk in bytes.chunks(4) {
        let mut group = [0_u8; 4];
        group[..chunk.len()].copy_from_slice(chunk);
        let mut value = u32::from_be_bytes(group);
        let mut chars = [0_u8; 5];
        for slot in chars.iter_mut().rev() {
            *slot = ALPHABET[(value % 85) as usize];
            value /= 85;
        }
        out.extend(chars.iter().map(|&c| char::from(c)));
    }
    out
}

/// Decodes a Z85 string: `4 * len / 5` bytes, fewer for a `#`-padded final group.
pub(crate) fn decode(text: &str) -> Result<Vec<u8>, Z85Error> {
    let text = text.as_bytes();
    if !text.len().is_multiple_of(5) {
        return Err(Z85Error {
            position: text.len(),
            reason: "length is not a multiple of 5",
        });
    }
    let mut out = Vec::with_capacity(text.len() / 5 * 4);
    let groups = text.len() / 5;
    for (group_index, group) in text.chunks_exact(5).enumerate() {
        let start = group_index * 5;
        // `#`-padded final group (see the module docs): 1 to 3 pad characters.
        let pad = if group_index + 1 == groups {
            group.iter().take(3).take_while(|&&c| c == b'#').count()
        } else {
            0
        };
        let value = digits_value(&group[pad..], start + pad)?;
        let bytes = 4 - pad;
        if pad > 0 && value >> (8 * bytes) != 0 {
            return Err(Z85Error {
                position: start,
                reason: "padded final group exceeds its byte count",
            });
        }
        // Five digits reach 85^5 - 1 > u32::MAX: such a group encodes no bytes.
        let value = u32::try_from(value).map_err(|_| Z85Error {
            position: start,
            reason: "group value exceeds 32 bits",
        })?;
        out.extend_from_slice(&value.to_be_bytes()[pad..]);
    }
    Ok(out)
}

/// The base-85 value of up to five digits; `offset` locates them for errors.
fn digits_value(digits: &[u8], offset: usize) -> Result<u64, Z85Error> {
    let mut value: u64 = 0;
    for (i, &c) in digits.iter().enumerate() {
        let digit = DIGITS[usize::from(c)];
        if digit == 0xFF {
            return Err(Z85Error {
                position: offset + i,
                reason: "character outside the Z85 alphabet",
            });
        }
        value = value * 85 + u64::from(digit);
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn zeromq_reference_vector() {
        // The example from the Z85 specification (ZeroMQ RFC 32).
        let bytes = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B];
        assert_eq!(encode(&bytes), "HelloWorld");
        assert_eq!(decode("HelloWorld").unwrap(), bytes);
    }

    #[test]
    fn uuid_vector_c() {
        let bytes = decode("^-aqEH.-t@S}K{vb[*k^").unwrap();
        assert_eq!(
            uuid::Uuid::from_slice(&bytes).unwrap().to_string(),
            "d2c639aa-8816-431a-aaf6-d3fe2512ff61"
        );
    }

    #[test]
    fn rejects_bad_length_character_and_overflow() {
        assert_eq!(decode("abcd").unwrap_err().position, 4);
        let err = decode("abcd\"").unwrap_err();
        assert_eq!(
            (err.position, err.reason),
            (4, "character outside the Z85 alphabet")
        );
        // A group above u32::MAX that is not a padded final group.
        assert_eq!(decode("#####00000").unwrap_err().position, 0);
        assert_eq!(decode("|0000").unwrap_err().position, 0);
        // "#####" as a final group: 3 pads, then "##" = 7224 > 255.
        let err = decode("00000#####").unwrap_err();
        assert_eq!(
            (err.position, err.reason),
            (5, "padded final group exceeds its byte count")
        );
        assert!(decode("é0000").is_err());
    }

    #[test]
    fn hash_padded_final_group() {
        // From kernel/cdf-table-with-dv version 5: the tail bytes 03 00.
        assert_eq!(decode("5c8Xg##093").unwrap(), [0x10, 0, 0, 0, 0x03, 0x00]);
        assert_eq!(decode("#0000").unwrap(), [0, 0, 0]);
        assert_eq!(decode("###30").unwrap(), [255]);
        assert!(decode("###31").is_err());
        // Only the final group may be padded.
        assert!(decode("##09300000").is_err());
    }

    #[test]
    fn pads_to_four_bytes() {
        assert_eq!(decode(&encode(&[1, 2, 3])).unwrap(), [1, 2, 3, 0]);
        assert_eq!(encode(&[]), "");
    }

    proptest! {
        #[test]
        fn round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let text = encode(&bytes);
            let back = decode(&text).unwrap();
            prop_assert_eq!(&back[..bytes.len()], &bytes[..]);
            prop_assert!(back[bytes.len()..].iter().all(|&b| b == 0));
        }
    }
}
