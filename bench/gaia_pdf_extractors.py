"""Time PDF text extractors side by side on one generated multi-page PDF.

    python bench/gaia_pdf_extractors.py            # 200 pages; or: python bench/gaia_pdf_extractors.py --pages 50

Each extractor reads the same file (written by `gaia_mas.gaia.tools.file_tools.write_text_pdf`); the best of a few runs is kept,
and every page's last line is looked for in the output, so a fast but wrong extractor shows up as such.
- pypdfium2: what `pdf_tool` uses (`gaia_mas.gaia.tools.file_tools.pdf_text`, with its page headers);
- pypdf: pure Python, installed with unstructured;
- pdfminer.six: the engine of unstructured's "fast" PDF strategy (pip install pdfminer.six);
- unstructured fast: `partition_pdf(strategy="fast")`, which needs the unstructured[pdf] extra
  (unstructured_inference, and with it PyTorch), so it is reported as skipped where that is not installed.
"""
import argparse, importlib.util, tempfile, time
from pathlib import Path
from gaia_mas.core.readers import pdf_text, unstructured_offline, write_text_pdf

def make_pdf(path:Path, pages:int) -> list[str]:
    "Write the test PDF; return the last line of each page, to look for in the output."
    texts = [f"Page {i}\n" + "\n".join(f"Line {j}: the quick brown fox jumps over {i * 100 + j} lazy dogs" for j in range(1, 46))
             for i in range(1, pages + 1)]
    write_text_pdf(path, texts)
    return [t.splitlines()[-1] for t in texts]

def with_pypdf(path):
    from pypdf import PdfReader
    return "\n".join(p.extract_text() for p in PdfReader(path).pages)

def with_pdfminer(path):
    from pdfminer.high_level import extract_text
    return extract_text(path)

def with_unstructured_fast(path):
    unstructured_offline()
    from unstructured.partition.pdf import partition_pdf
    return "\n".join(e.text for e in partition_pdf(filename=str(path), strategy="fast"))

EXTRACTORS = {"pypdfium2": (lambda p: pdf_text(p), "pypdfium2"), "pypdf": (with_pypdf, "pypdf"),
              "pdfminer.six": (with_pdfminer, "pdfminer"), "unstructured fast": (with_unstructured_fast, "unstructured_inference")}

def best_time(fn, path, budget_s:float=20) -> tuple[float, str]:
    "The fastest of up to 5 runs (fewer when a run is slow), and the text of the last."
    times, spent = [], 0.0
    while len(times) < 5 and (not times or spent + times[-1] < budget_s):
        t = time.perf_counter(); text = fn(path); times.append(time.perf_counter() - t); spent += times[-1]
    return min(times), text

def main(pages:int):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d)/"bench.pdf"; last_lines = make_pdf(path, pages)
        print(f"{pages}-page PDF, {path.stat().st_size / 1e6:.1f} MB; best of up to 5 runs\n")
        print(f"{'extractor':<18} {'seconds':>8} {'ms/page':>8} {'vs pypdfium2':>13} {'pages found':>12}")
        base = None
        for name, (fn, module) in EXTRACTORS.items():
            if importlib.util.find_spec(module) is None:
                print(f"{name:<18} {'skipped: ' + module + ' is not installed':>43}"); continue
            try: secs, text = best_time(fn, path)
            except Exception as e: print(f"{name:<18} failed: {type(e).__name__}: {e}"[:120]); continue
            base = base or secs
            found = sum(l in text for l in last_lines)
            print(f"{name:<18} {secs:8.3f} {secs / pages * 1000:8.2f} {secs / base:12.1f}x {found:>6}/{pages}")

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=200)
    main(ap.parse_args().pages)
