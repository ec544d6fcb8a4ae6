package pdf

import (
	"strconv"
	"strings"
)

// The simple encodings, as glyph names by code (as the PDF reference
// gives them); a glyph name's text comes from glyphRunes.
var (
	winAnsiNames  [256]string
	standardNames [256]string
	glyphRunes    = map[string]rune{}
)

const asciiNames = "space exclam quotedbl numbersign dollar percent ampersand quotesingle " +
	"parenleft parenright asterisk plus comma hyphen period slash zero one two three four " +
	"five six seven eight nine colon semicolon less equal greater question at A B C D E F G " +
	"H I J K L M N O P Q R S T U V W X Y Z bracketleft backslash bracketright asciicircum " +
	"underscore grave a b c d e f g h i j k l m n o p q r s t u v w x y z braceleft bar " +
	"braceright asciitilde"

// WinAnsi 128-159 (Windows-1252) and 160-255 (Latin-1), with their runes.
const winHighNames = "Euro - quotesinglbase florin quotedblbase ellipsis dagger daggerdbl " +
	"circumflex perthousand Scaron guilsinglleft OE - Zcaron - - quoteleft quoteright " +
	"quotedblleft quotedblright bullet endash emdash tilde trademark scaron guilsinglright " +
	"oe - zcaron Ydieresis " +
	"space exclamdown cent sterling currency yen brokenbar section dieresis copyright " +
	"ordfeminine guillemotleft logicalnot hyphen registered macron degree plusminus " +
	"twosuperior threesuperior acute mu paragraph periodcentered cedilla onesuperior " +
	"ordmasculine guillemotright onequarter onehalf threequarters questiondown Agrave " +
	"Aacute Acircumflex Atilde Adieresis Aring AE Ccedilla Egrave Eacute Ecircumflex " +
	"Edieresis Igrave Iacute Icircumflex Idieresis Eth Ntilde Ograve Oacute Ocircumflex " +
	"Otilde Odieresis multiply Oslash Ugrave Uacute Ucircumflex Udieresis Yacute Thorn " +
	"germandbls agrave aacute acircumflex atilde adieresis aring ae ccedilla egrave eacute " +
	"ecircumflex edieresis igrave iacute icircumflex idieresis eth ntilde ograve oacute " +
	"ocircumflex otilde odieresis divide oslash ugrave uacute ucircumflex udieresis yacute " +
	"thorn ydieresis"

var win128 = []rune{0x20ac, 0, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030,
	0x160, 0x2039, 0x152, 0, 0x17d, 0, 0, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013,
	0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0, 0x17e, 0x178}

// Standard encoding 161-251 where it differs from nothing: code, name.
const standardHigh = "161 exclamdown 162 cent 163 sterling 164 fraction 165 yen 166 florin " +
	"167 section 168 currency 169 quotesingle 170 quotedblleft 171 guillemotleft " +
	"172 guilsinglleft 173 guilsinglright 174 fi 175 fl 177 endash 178 dagger 179 daggerdbl " +
	"180 periodcentered 182 paragraph 183 bullet 184 quotesinglbase 185 quotedblbase " +
	"186 quotedblright 187 guillemotright 188 ellipsis 189 perthousand 191 questiondown " +
	"193 grave 194 acute 195 circumflex 196 tilde 197 macron 198 breve 199 dotaccent " +
	"200 dieresis 202 ring 203 cedilla 205 hungarumlaut 206 ogonek 207 caron 208 emdash " +
	"225 AE 227 ordfeminine 232 Lslash 233 Oslash 234 OE 235 ordmasculine 241 ae " +
	"245 dotlessi 248 lslash 249 oslash 250 oe 251 germandbls"

// Glyph names beyond the two encodings that documents use: ligatures,
// accents, Greek and the math of TeX's fonts.
const extraGlyphs = "fi fb01 fl fb02 ff fb00 ffi fb03 ffl fb04 dotlessi 131 dotlessj 237 " +
	"Lslash 141 lslash 142 fraction 2044 breve 2d8 dotaccent 2d9 ring 2da hungarumlaut 2dd " +
	"ogonek 2db caron 2c7 minus 2212 quotesingle 27 " +
	"alpha 3b1 beta 3b2 gamma 3b3 delta 3b4 epsilon 3b5 zeta 3b6 eta 3b7 theta 3b8 iota 3b9 " +
	"kappa 3ba lambda 3bb nu 3bd xi 3be omicron 3bf pi 3c0 rho 3c1 sigma1 3c2 sigma 3c3 " +
	"tau 3c4 upsilon 3c5 phi 3c6 chi 3c7 psi 3c8 omega 3c9 Gamma 393 Delta 394 Theta 398 " +
	"Lambda 39b Xi 39e Pi 3a0 Sigma 3a3 Upsilon 3a5 Phi 3a6 Psi 3a8 Omega 3a9 " +
	"arrowright 2192 arrowleft 2190 arrowup 2191 arrowdown 2193 arrowboth 2194 " +
	"arrowdblright 21d2 arrowdblleft 21d0 arrowdblboth 21d4 infinity 221e lessequal 2264 " +
	"greaterequal 2265 notequal 2260 approxequal 2248 similar 223c element 2208 " +
	"summation 2211 product 220f radical 221a partialdiff 2202 integral 222b " +
	"asteriskmath 2217 circlemultiply 2297 circleplus 2295 emptyset 2205 universal 2200 " +
	"existential 2203 nabla 2207 angleleft 2329 angleright 232a visiblespace 2423 " +
	"openbullet 25e6 dotmath 22c5 equivalence 2261 proportional 221d union 222a " +
	"intersection 2229 propersubset 2282 propersuperset 2283 reflexsubset 2286 " +
	"reflexsuperset 2287 logicaland 2227 logicalor 2228 perpendicular 22a5 " +
	"quoteleftreversed 201b Euro 20ac"

func init() {
	for i, n := range strings.Fields(asciiNames) {
		winAnsiNames[32+i] = n
		standardNames[32+i] = n
		glyphRunes[n] = rune(32 + i)
	}
	standardNames[39], standardNames[96] = "quoteright", "quoteleft"
	for i, n := range strings.Fields(winHighNames) {
		c := 128 + i
		r := rune(c)
		if c < 160 {
			r = win128[i]
		}
		if n == "-" {
			n = "bullet" // WinAnsi shows undefined codes as bullets
			r = 0x2022
		}
		winAnsiNames[c] = n
		if _, ok := glyphRunes[n]; !ok {
			glyphRunes[n] = r
		}
	}
	f := strings.Fields(standardHigh)
	for i := 0; i+1 < len(f); i += 2 {
		c, _ := strconv.Atoi(f[i])
		standardNames[c] = f[i+1]
	}
	f = strings.Fields(extraGlyphs)
	for i := 0; i+1 < len(f); i += 2 {
		r, _ := strconv.ParseUint(f[i+1], 16, 32)
		glyphRunes[f[i]] = rune(r)
	}
}

// namedEncoding returns the table of a named encoding, nil if unknown.
// MacRoman is read as WinAnsi: both are ASCII below 128, where the text
// of documents mostly is.
func namedEncoding(n name) *[256]string {
	switch n {
	case "WinAnsiEncoding", "MacRomanEncoding", "MacExpertEncoding":
		return &winAnsiNames
	case "StandardEncoding":
		return &standardNames
	}
	return nil
}

// glyphText is a glyph name's text: known names, uniXXXX and uXXXX[XX],
// ligatures written a_b, and suffixes (a.sc, one.oldstyle) dropped.
func glyphText(n string) string {
	if n == "" {
		return ""
	}
	if r, ok := glyphRunes[n]; ok {
		return string(r)
	}
	if i := strings.IndexByte(n, '.'); i > 0 {
		return glyphText(n[:i])
	}
	if strings.Contains(n, "_") {
		var b strings.Builder
		for _, p := range strings.Split(n, "_") {
			b.WriteString(glyphText(p))
		}
		return b.String()
	}
	if strings.HasPrefix(n, "uni") && len(n) >= 7 && (len(n)-3)%4 == 0 {
		var b strings.Builder
		for i := 3; i+4 <= len(n); i += 4 {
			if v, err := strconv.ParseUint(n[i:i+4], 16, 32); err == nil {
				b.WriteRune(rune(v))
			}
		}
		return b.String()
	}
	if strings.HasPrefix(n, "u") && len(n) >= 5 && len(n) <= 7 {
		if v, err := strconv.ParseUint(n[1:], 16, 32); err == nil && v <= 0x10ffff {
			return string(rune(v))
		}
	}
	return ""
}
