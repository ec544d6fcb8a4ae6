package fs

import (
	"context"
	"io"
	"strings"

	"github.com/serverfs/serverfs/internal/archive"
	"github.com/serverfs/serverfs/internal/document/imagefit"
)

// Images (PNG, JPEG, GIF, WebP) are read for the model as images: decoded
// per call only when their declared dimensions are within imageMaxPixels,
// scaled so the longest side is at most imageMaxSide, and encoded within
// Limits.ImageMaxBytes. SVG is text.

// imageMaxPixels bounds an image decoded: 24 megapixels (6000×4000, a
// camera's photo) decode to 36 MB as JPEG and up to 96 MB as RGBA PNG,
// near what one heavy call is budgeted at; larger ones are refused from
// their header, before any pixel is decoded.
const imageMaxPixels = 24_000_000

// imageMaxSide is the longest side shown: what vision models scale to.
const imageMaxSide = 1568

// ImageKind names the image format a file's name says ("png", "jpeg",
// "gif", "webp"), "" for any other file.
func ImageKind(name string) string {
	name = strings.ToLower(name[strings.LastIndexByte(name, '/')+1:])
	switch name[strings.LastIndexByte(name, '.')+1:] {
	case "png":
		return "png"
	case "jpg", "jpeg":
		return "jpeg"
	case "gif":
		return "gif"
	case "webp":
		return "webp"
	}
	return ""
}

// Image is an image file read for the model.
type Image struct {
	Workdir, Path string
	imagefit.Result
}

// ReadImage reads the image file raw (on disk or an archive's member)
// and fits it into the model's bounds.
func (f *FS) ReadImage(ctx context.Context, alias, raw string) (*Image, error) {
	w, err := f.Workdir(alias)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.limits.SearchTimeout)
	defer cancel()
	lim := imagefit.Limits{MaxPixels: imageMaxPixels, MaxBytes: f.limits.ImageMaxBytes, MaxSide: imageMaxSide, MaxInput: f.limits.SearchMaxFileBytes}
	var src io.Reader
	var p string
	if a, ok, _ := w.archiveAt(raw, false); ok {
		defer a.Close()
		rc, _, err := archive.Open(ctx, a.src, a.format, a.member, a.opt)
		if err != nil {
			return nil, a.memberError(w.alias, err)
		}
		defer rc.Close()
		src, p = rc, a.path()
	} else {
		file, info, err := w.OpenFile(raw)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		src, p = io.NewSectionReader(file, 0, *info.Size), info.Path
	}
	res, err := imagefit.Fit(ctx, src, lim)
	if err != nil {
		return nil, locate(err, w.alias, p, "could not be read as an image")
	}
	return &Image{Workdir: w.alias, Path: p, Result: *res}, nil
}
