use pdfium_render::prelude::*;
fn main() {
    let p = Pdfium::new(Pdfium::bind_to_library(std::env::var("LIB").unwrap()).unwrap());
    let d = p
        .load_pdf_from_file(&std::env::args().nth(1).unwrap(), None)
        .unwrap();
    let page = d.pages().get(0).unwrap();
    let t = page.text().unwrap();
    for c in t.chars().iter() {
        println!(
            "{:?} U+{:04X} x={:?} gen={:?} bounds={:?}",
            c.unicode_char(),
            c.unicode_value(),
            c.origin_x().map(|v| v.value),
            c.is_generated().ok(),
            c.loose_bounds()
                .map(|b| (b.left().value, b.right().value))
                .ok()
        );
    }
}
