package mcp

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// pdfOf writes a PDF of pages, each a content stream in Helvetica, by
// hand: numbered objects, a cross-reference table and a trailer.
func pdfOf(pages ...string) []byte {
	var b bytes.Buffer
	offs := map[int]int{}
	obj := func(n int, body string) {
		offs[n] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", n, body)
	}
	b.WriteString("%PDF-1.4\n")
	var kids []string
	for i := range pages {
		kids = append(kids, fmt.Sprintf("%d 0 R", 10+2*i))
	}
	obj(1, "<< /Type /Catalog /Pages 2 0 R >>")
	obj(2, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	obj(3, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	last := 3
	for i, c := range pages {
		obj(10+2*i, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 11+2*i))
		obj(11+2*i, fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(c), c))
		last = 11 + 2*i
	}
	x := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", last+1)
	for i := 1; i <= last; i++ {
		if off, ok := offs[i]; ok {
			fmt.Fprintf(&b, "%010d 00000 n \n", off)
		} else {
			b.WriteString("0000000000 65535 f \n")
		}
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", last+1, x)
	return b.Bytes()
}

// textPage is a page's content stream showing lines of text.
func textPage(lines ...string) string {
	s := "BT /F1 12 Tf 72 700 Td"
	for _, l := range lines {
		s += fmt.Sprintf(" (%s) Tj 0 -14 Td", l)
	}
	return s + " ET"
}

// zipOfParts is a zip of name, content pairs.
func zipOfParts(t *testing.T, parts ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i+1 < len(parts); i += 2 {
		w, err := zw.Create(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(parts[i+1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// docxOf is a minimal Word document of paragraphs.
func docxOf(t *testing.T, paras ...string) []byte {
	body := ""
	for _, p := range paras {
		body += "<w:p><w:r><w:t>" + p + "</w:t></w:r></w:p>"
	}
	return zipOfParts(t,
		"[Content_Types].xml", `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
		"_rels/.rels", `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
		"word/document.xml", `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`+body+`</w:body></w:document>`)
}

// noisePNG is a w×h RGB image of noise over gradients (a photo's worst
// case for a byte budget), as PNG.
func noisePNG(t *testing.T, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewSource(1))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8(rng.Intn(256)), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hugePNGHeader is a PNG whose header claims 100,000×100,000 pixels.
func hugePNGHeader() []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], 100_000)
	binary.BigEndian.PutUint32(ihdr[4:], 100_000)
	ihdr[8], ihdr[9] = 8, 6
	chunk("IHDR", ihdr)
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	chunk("IEND", nil)
	return b.Bytes()
}

// TestDocumentsAndImagesInPlace: over real HTTP, read_text_file reads a
// PDF (pages in the header), a docx and a PDF inside a zip as text, and
// shows a PNG as image content within the byte budget with its original
// dimensions in the text; search_text finds words in documents only when
// asked; hostile files answer their codes.
func TestDocumentsAndImagesInPlace(t *testing.T) {
	e := newEnv(t)
	runbook := pdfOf(textPage("Runbook", "Failover: promote the replica"), textPage("Backups run nightly", "Restore with care"))
	writeFile(t, filepath.Join(e.root, "runbook.pdf"), runbook)
	writeFile(t, filepath.Join(e.root, "notes.docx"), docxOf(t, "Capacity plan", "Add two failover nodes"))
	writeFile(t, filepath.Join(e.root, "release.zip"), zipOfParts(t, "docs/runbook.pdf", string(runbook)))
	writeFile(t, filepath.Join(e.root, "grafana-cpu.png"), noisePNG(t, 2400, 1200))
	writeFile(t, filepath.Join(e.root, "bomb.png"), hugePNGHeader())
	writeFile(t, filepath.Join(e.root, "locked.pdf"), []byte(strings.Replace(string(runbook), "/Root 1 0 R", "/Root 1 0 R /Encrypt << /Filter /Standard >>", 1)))
	cs := e.client(t, e.serveHTTP(t))
	call := func(tool string, args map[string]any) *sdk.CallToolResult {
		t.Helper()
		args["workdir"] = "wd"
		return e.call(t, cs, tool, args)
	}
	for _, c := range []struct {
		path  string
		args  map[string]any
		wants []string
	}{
		{"runbook.pdf", nil, []string{"(pdf text, page 1 to page 2 of 2)", "Failover: promote the replica", "Restore with care"}},
		{"runbook.pdf", map[string]any{"start_line": 3, "max_lines": 1}, []string{"(pdf text, page 2 of 2) lines 3-3", "Backups run nightly"}},
		{"notes.docx", nil, []string{"(docx text)", "Capacity plan\nAdd two failover nodes"}},
		{"release.zip/docs/runbook.pdf", nil, []string{"(pdf text, page 1 to page 2 of 2)", "Failover"}},
	} {
		args := map[string]any{"path": c.path}
		for k, v := range c.args {
			args[k] = v
		}
		res := call("read_text_file", args)
		text := resultText(res)
		for _, w := range c.wants {
			if res.IsError || !strings.Contains(text, w) {
				t.Errorf("read_text_file %s %v: want %q in\n%s", c.path, c.args, w, text)
			}
		}
	}
	res := call("read_text_file", map[string]any{"path": "grafana-cpu.png"})
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("image: %s", resultText(res))
	}
	img, ok := res.Content[1].(*sdk.ImageContent)
	if !ok || !strings.Contains(resultText(res), "image png 2400×1200") || len(img.Data) > 1<<20 {
		t.Fatalf("image: %s, %T", resultText(res), res.Content[1])
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(img.Data))
	if err != nil || max(cfg.Width, cfg.Height) > 1568 || cfg.Width != 2*cfg.Height || "image/"+format != img.MIMEType {
		t.Fatalf("image content: %v %s %dx%d, mime %s", err, format, cfg.Width, cfg.Height, img.MIMEType)
	}
	if _, err := jpeg.Decode(bytes.NewReader(img.Data)); format == "jpeg" && err != nil {
		t.Fatal(err)
	}
	for path, code := range map[string]string{"bomb.png": "DOCUMENT_TOO_LARGE", "locked.pdf": "DOCUMENT_ENCRYPTED"} {
		if res := call("read_text_file", map[string]any{"path": path}); !res.IsError || !strings.HasPrefix(resultText(res), code) {
			t.Errorf("%s: %s (want %s)", path, resultText(res), code)
		}
	}
	off := resultText(call("search_text", map[string]any{"query": "failover", "case_sensitive": false}))
	on := resultText(call("search_text", map[string]any{"query": "failover", "case_sensitive": false, "documents": true}))
	if strings.Contains(off, "runbook.pdf") || !strings.Contains(off, "documents 3") || !strings.Contains(off, "hint: archives and PDF/office documents were skipped") ||
		!strings.Contains(on, "runbook.pdf\n2:Failover: promote the replica") || !strings.Contains(on, "notes.docx\n2:Add two failover nodes") {
		t.Errorf("search_text without documents:\n%s\nwith:\n%s", off, on)
	}
}

// TestPDFAgainstPdftotext: the text read_text_file shows of a PDF has
// the words pdftotext (poppler) finds, page by page.
func TestPDFAgainstPdftotext(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (poppler-utils) is the oracle: .ci/run installs it; internal/document/pdf's differential runs it over real PDFs")
	}
	e := newEnv(t)
	doc := pdfOf(textPage("Alpha beta", "gamma"), textPage("delta epsilon"))
	p := filepath.Join(e.root, "d.pdf")
	writeFile(t, p, doc)
	out, err := exec.Command("pdftotext", "-layout", p, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	text := resultText(e.call(t, e.client(t, e.serveHTTP(t)), "read_text_file", map[string]any{"workdir": "wd", "path": "d.pdf"}))
	for _, w := range strings.Fields(string(out)) {
		if !strings.Contains(text, w) {
			t.Errorf("pdftotext's %q not in\n%s", w, text)
		}
	}
	_ = os.Remove(p)
}
