package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// read_text_file on an image (PNG, JPEG, GIF, WebP) answers with the
// image itself, as MCP image content after the text header: downscaled
// to SERVERFS_IMAGE_MAX_BYTES and the longest side vision models use, the
// original's dimensions in the text. The structured content describes it
// and holds no pixels: they travel once.

// imageOut describes an image read.
type imageOut struct {
	Format string `json:"format"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	// Shown is the image content's: its MIME type, dimensions and bytes
	// (the original's when it fit as it is).
	MIMEType    string `json:"mime_type"`
	ShownWidth  int    `json:"shown_width"`
	ShownHeight int    `json:"shown_height"`
	Bytes       int    `json:"bytes"`
	Frames      int    `json:"frames,omitempty"` // a GIF's frames, when more than one: the first is shown

	data []byte
}

// imager is an output with image content besides its text.
type imager interface{ imageContent() *sdk.ImageContent }

func (o *readTextFileOut) imageContent() *sdk.ImageContent {
	if o.Image == nil {
		return nil
	}
	return &sdk.ImageContent{Data: o.Image.data, MIMEType: o.Image.MIMEType}
}

// text is the image's header line: "==> wd:a.png image png 4000×3000,
// shown 1568×1176 image/jpeg 183412 bytes <==".
func (im *imageOut) text(workdir, path string) string {
	s := fmt.Sprintf("==> %s:%s image %s %d×%d, shown %d×%d %s %d bytes", workdir, path, im.Format, im.Width, im.Height,
		im.ShownWidth, im.ShownHeight, im.MIMEType, im.Bytes)
	if im.Frames > 1 {
		s += fmt.Sprintf(", first of %d frames", im.Frames)
	}
	return s + " <==\n"
}

// readImage is read_text_file of an image.
func readImage(ctx context.Context, d *Deps, in readTextFileIn, info callInfo) (*readTextFileOut, callInfo, error) {
	img, err := d.FS.ReadImage(ctx, in.Workdir, in.Path)
	if err != nil {
		return nil, info, err
	}
	out := &readTextFileOut{Image: &imageOut{Format: img.Format, Width: img.Width, Height: img.Height, MIMEType: img.MIMEType,
		ShownWidth: img.OutWidth, ShownHeight: img.OutHeight, Bytes: len(img.Data), Frames: img.Frames, data: img.Data}}
	out.Workdir, out.Path = img.Workdir, img.Path
	info.bytes = len(img.Data)
	return out, info, nil
}
