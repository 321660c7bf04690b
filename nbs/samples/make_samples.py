"""Write the small sample attachments that the tool notebooks read: `python nbs/samples/make_samples.py`.

Every file is generated here, from made-up content, so the samples can be rebuilt at any time."""
import io, json, math, struct, wave, zipfile
from pathlib import Path

HERE = Path(__file__).parent

def text_files():
    (HERE/"sample.txt").write_text("Field notes, day 3\nThe heron came back at 06:40 and stayed for 12 minutes.\nWater level: 1.8 m.\n")
    (HERE/"sample.py").write_text("def fib(n):\n    a, b = 0, 1\n    for _ in range(n): a, b = b, a + b\n    return a\n\nprint(fib(20))\n")
    (HERE/"sample.csv").write_text("city,visitors,year\nLyon,1200,2021\nOslo,860,2021\nPorto,1530,2022\n")
    (HERE/"sample.json").write_text(json.dumps({"station": "B7", "readings": [3.2, 3.5, 2.9], "ok": True}))
    (HERE/"sample.jsonld").write_text(json.dumps({"@context": "https://schema.org", "@type": "Book",
                                                  "name": "A Year of Tides", "author": {"@type": "Person", "name": "R. Okafor"}}))

def docx_file():
    import docx
    d = docx.Document()
    d.add_heading("Harbour committee minutes", 1)
    d.add_paragraph("The committee approved a budget of 4,200 euros for new mooring lines.")
    for item in ("Repaint the north pier", "Replace two buoys"): d.add_paragraph(item, style="List Bullet")
    t = d.add_table(rows=3, cols=2)
    for r, (k, v) in enumerate([("Item", "Cost"), ("Paint", "900"), ("Buoys", "3300")]):
        t.cell(r, 0).text, t.cell(r, 1).text = k, v
    d.save(HERE/"sample.docx")

def pptx_file():
    import pptx
    p = pptx.Presentation()
    for title, body in [("Survey results", "412 people answered."), ("Favourite season", "Autumn won with 38%."),
                        ("Next steps", "Repeat the survey in May.")]:
        s = p.slides.add_slide(p.slide_layouts[1])
        s.shapes.title.text, s.placeholders[1].text = title, body
    p.slides[1].notes_slide.notes_text_frame.text = "Spring came second with 31%."
    p.save(HERE/"sample.pptx")

def xlsx_file():
    import openpyxl
    from openpyxl.styles import PatternFill
    wb = openpyxl.Workbook(); ws = wb.active; ws.title = "Menu"
    for row in [("Item", "Category", "Sales"), ("Soup", "Food", 120.5), ("Tea", "Drink", 80), ("Pie", "Food", 210)]:
        ws.append(row)
    plots = wb.create_sheet("Plots")
    green, red = PatternFill("solid", fgColor="FF00B050"), PatternFill("solid", fgColor="FFFF0000")
    for r in range(1, 4):
        for c in range(1, 4): plots.cell(r, c).fill = green if (r + c) % 2 else red
    plots["A1"] = "START"; plots["C3"] = "END"
    wb.save(HERE/"sample.xlsx")

def pdf_files():
    from gaia_mas.core.readers import write_text_pdf
    pages = [f"Annual report, page {i}\nRevenue in quarter {i}: {100 * i + 17} thousand.\nSee the notes on page {i % 3 + 1}."
             for i in range(1, 4)]
    write_text_pdf(HERE/"sample.pdf", pages)
    from PIL import Image, ImageDraw, ImageFont
    img = Image.new("L", (1240, 600), 255)
    ImageDraw.Draw(img).text((80, 200), "INVOICE 4471\nTOTAL 93.50 EUR", fill=0, font=ImageFont.load_default(size=72))
    img.save(HERE/"scanned.pdf", "PDF", resolution=150)

def image_file():
    from PIL import Image, ImageDraw, ImageFont
    img = Image.new("RGB", (320, 160), "white")
    d = ImageDraw.Draw(img)
    d.rectangle((20, 20, 120, 140), fill="red"); d.ellipse((160, 30, 260, 130), fill="blue")
    d.text((130, 60), "7/8", fill="black", font=ImageFont.load_default(size=32))
    img.save(HERE/"sample.png")

def wav_file():
    with wave.open(str(HERE/"sample.wav"), "wb") as w:
        w.setnchannels(1); w.setsampwidth(2); w.setframerate(8000)
        w.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * 440 * t / 8000))) for t in range(8000)))

def zip_file():
    with zipfile.ZipFile(HERE/"sample.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.write(HERE/"sample.csv", "data/visitors.csv")
        z.write(HERE/"sample.docx", "minutes.docx")
        z.writestr("readme.txt", "Two files: visitor counts and the committee minutes.\n")

if __name__ == "__main__":
    for make in (text_files, docx_file, pptx_file, xlsx_file, pdf_files, image_file, wav_file, zip_file): make()
    print("\n".join(f"{p.name}\t{p.stat().st_size}" for p in sorted(HERE.iterdir()) if p.suffix != ".py" or p.name == "sample.py"))
