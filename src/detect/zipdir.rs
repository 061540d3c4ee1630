//! Lists the entry names of a zip from its central directory, decompressing nothing.
//!
//! Used to tell Office/OpenDocument packages from other zips at upload time. Reading only
//! the directory keeps quines, bombs and lying size fields harmless here.

use std::io::{Read, Seek, SeekFrom};

/// Entry names, at most `max_entries` of them. `None` when there is no readable directory.
pub fn entry_names<R: Read + Seek>(
    r: &mut R,
    total_len: u64,
    max_entries: usize,
) -> Option<Vec<String>> {
    // The end-of-central-directory record sits in the last 22 + 65535 bytes.
    let tail_len = total_len.min(22 + 65_535);
    r.seek(SeekFrom::Start(total_len - tail_len)).ok()?;
    let mut tail = vec![0u8; tail_len as usize];
    r.read_exact(&mut tail).ok()?;
    let eocd = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| tail[i..i + 4] == *b"PK\x05\x06")?;
    let rec = &tail[eocd..];
    let le16 = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as u64;
    let le32 = |b: &[u8], o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]) as u64;
    let le64 = |b: &[u8], o: usize| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[o..o + 8]);
        u64::from_le_bytes(a)
    };
    let mut count = le16(rec, 10);
    let mut cd_size = le32(rec, 12);
    let mut cd_off = le32(rec, 16);
    if cd_off == 0xFFFF_FFFF || count == 0xFFFF {
        // Zip64: the locator sits 20 bytes before the classic record.
        let loc_at = (total_len - tail_len) as usize + eocd;
        let loc_at = loc_at.checked_sub(20)?;
        r.seek(SeekFrom::Start(loc_at as u64)).ok()?;
        let mut loc = [0u8; 20];
        r.read_exact(&mut loc).ok()?;
        if loc[..4] != *b"PK\x06\x07" {
            return None;
        }
        r.seek(SeekFrom::Start(le64(&loc, 8))).ok()?;
        let mut z = [0u8; 56];
        r.read_exact(&mut z).ok()?;
        if z[..4] != *b"PK\x06\x06" {
            return None;
        }
        count = le64(&z, 32);
        cd_size = le64(&z, 40);
        cd_off = le64(&z, 48);
    }
    if cd_off.checked_add(cd_size)? > total_len || cd_size > 64 * 1024 * 1024 {
        return None;
    }
    r.seek(SeekFrom::Start(cd_off)).ok()?;
    let mut cd = vec![0u8; cd_size as usize];
    r.read_exact(&mut cd).ok()?;
    let mut names = Vec::new();
    let mut p = 0usize;
    while names.len() < (count as usize).min(max_entries) && p + 46 <= cd.len() {
        if cd[p..p + 4] != *b"PK\x01\x02" {
            break;
        }
        let n = le16(&cd, p + 28) as usize;
        let m = le16(&cd, p + 30) as usize;
        let k = le16(&cd, p + 32) as usize;
        let Some(name) = cd.get(p + 46..p + 46 + n) else {
            break;
        };
        names.push(String::from_utf8_lossy(name).into_owned());
        p += 46 + n + m + k;
    }
    Some(names)
}

/// Entry names from every local file header signature found in `head` (for zips cut
/// short, whose central directory is gone; entries with data descriptors cannot be
/// walked from one to the next, so the signatures are searched for).
pub fn local_names(head: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    let mut p = 0usize;
    while p + 30 <= head.len() {
        if head[p..p + 4] != *b"PK\x03\x04" {
            p += 1;
            continue;
        }
        let n = u16::from_le_bytes([head[p + 26], head[p + 27]]) as usize;
        if let Some(name) = head.get(p + 30..p + 30 + n) {
            if let Ok(s) = std::str::from_utf8(name) {
                names.push(s.to_string());
            }
        }
        p += 30 + n;
    }
    names
}
