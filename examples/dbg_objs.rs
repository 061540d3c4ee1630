use pdfium_render::prelude::*;
fn main() {
    let p = Pdfium::new(Pdfium::bind_to_library(std::env::var("LIB").unwrap()).unwrap());
    let d = p
        .load_pdf_from_file(&std::env::args().nth(1).unwrap(), None)
        .unwrap();
    for (i, page) in d.pages().iter().enumerate() {
        let t = page.text().unwrap();
        println!(
            "page {} chars={} objs={} annots={}",
            i + 1,
            t.len(),
            page.objects().len(),
            page.annotations().len()
        );
        for o in page.objects().iter().take(8) {
            println!("  obj {:?}", o.object_type());
        }
        for a in page.annotations().iter().take(8) {
            println!(
                "  annot {:?} {:?}",
                a.annotation_type(),
                a.as_form_field().map(|f| (f.name(), f.field_type()))
            );
        }
    }
}
