//! Format detection, below extraction: what a file is, from its bytes (`sniff`: magic
//! numbers, the zip directory of Office packages, the OLE2 directory), and how its text is
//! encoded (`encoding`). Extraction, uploads and the read service look down on it; it
//! looks at nothing above.

mod cjk;
pub mod encoding;
pub mod sniff;
pub mod zipdir;

pub use sniff::*;
