// Package jsonstr appends Go strings as JSON strings, eight bytes at a
// time, with slog.JSONHandler's rules: '"', '\\' and control characters
// are escaped (\n, \r, \t and \", \\ in their short forms, the others as
// \u00XX), so are U+2028 and U+2029; each invalid UTF-8 byte becomes
// \ufffd; HTML characters (< > &) are kept as they are.
//
// It also holds the word-at-a-time pieces the encoder is made of
// ([SpecialMask], [UnmarkBefore], [SeqLen], [ShortRune]), which a JSON
// string validator and decoder need as well: they must agree on which
// bytes need a look and on what a valid UTF-8 sequence is.
package jsonstr
