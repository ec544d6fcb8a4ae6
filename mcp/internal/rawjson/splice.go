package rawjson

import (
	"context"
	"strconv"
)

// A Splicer is a transport that writes part of a message itself, after
// the message was encoded: go-sdk encodes every result with encoding/json,
// which re-validates byte by byte all that a MarshalJSON method returns,
// so a large value that is already JSON (a tool's text and structured
// content) is cheaper written around the encoding than through it.
//
// Hold keeps b and returns a token, an integer the encoder writes where b
// belongs, as the value of a top-level member of the message's result;
// the transport writes b in the token's place (b may so be more than one
// value: "[...],\"more\":{...}"). ok is false when the splicer holds too
// much already: the caller then encodes b in place.
type Splicer interface {
	Hold(b []byte) (token int64, ok bool)
}

type splicerKey struct{}

// WithSplicer is ctx carrying s: the context go-sdk's handlers of the
// transport's session see (go-sdk derives them from the context of
// Server.Run and Server.Connect).
func WithSplicer(ctx context.Context, s Splicer) context.Context {
	return context.WithValue(ctx, splicerKey{}, s)
}

// SplicerFrom is the splicer ctx carries, or nil.
func SplicerFrom(ctx context.Context) Splicer {
	s, _ := ctx.Value(splicerKey{}).(Splicer)
	return s
}

// MemberValue finds the value of the top-level member key of the JSON
// object b (compact encoding/json output): b[start:end].
func MemberValue(b []byte, key string) (start, end int, ok bool) {
	p := Scanner{B: b}
	if !p.Consume('{') {
		return 0, 0, false
	}
	for first := true; !p.Consume('}'); first = false {
		if !first && !p.Consume(',') {
			return 0, 0, false
		}
		p.Space()
		if p.I >= len(p.B) || p.B[p.I] != '"' {
			return 0, 0, false
		}
		kEnd := StringEnd(p.B, p.I)
		if kEnd < 0 {
			return 0, 0, false
		}
		k := p.B[p.I+1 : kEnd]
		p.I = kEnd + 1
		if !p.Consume(':') {
			return 0, 0, false
		}
		p.Space()
		start := p.I
		if !p.SkipValue() {
			return 0, 0, false
		}
		if string(k) == key {
			return start, p.I, true
		}
	}
	return 0, 0, false
}

// Token is the integer b holds, if b is one (digits, no sign).
func Token(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}
