package wire

import (
	"encoding/json"
	"unicode/utf8"
)

// Decoder decodes JSON-RPC bodies. Its only state is an immutable table of
// method names to intern, so decoding a known method allocates no string.
// A Decoder is safe for concurrent use; the zero Decoder interns nothing.
type Decoder struct {
	intern map[string]string
}

// NewDecoder returns a Decoder that interns the given method names.
func NewDecoder(methods ...string) *Decoder {
	d := &Decoder{intern: make(map[string]string, len(methods))}
	for _, m := range methods {
		d.intern[m] = m
	}
	return d
}

// IsBatch reports whether the first non-whitespace byte of data is '[',
// i.e. whether the body is (or tries to be) a batch. It does not validate
// anything: call DecodeBatch or Decode to get the right error.
func IsBatch(data []byte) bool {
	i := skipSpace(data, 0)
	return i < len(data) && data[i] == '['
}

// Decode decodes a body holding a single message with a zero Decoder.
func Decode(data []byte) (Message, *Error) {
	var d Decoder
	return d.Decode(data)
}

// DecodeBatch decodes a batch body of any length with a zero Decoder.
func DecodeBatch(data []byte) ([]BatchItem, *Error) {
	var d Decoder
	return d.DecodeBatch(data, 0)
}

// checkText validates the whole body in one pass: JSON syntax (nesting
// bounded at encoding/json's depth limit) and UTF-8. Which of the two a
// bad body breaks is only worked out when it is bad.
func checkText(data []byte) *Error {
	if valid(data) {
		return nil
	}
	if !utf8.Valid(data) {
		return errNotUTF8
	}
	return errParse
}

// Decode decodes a body holding a single message. On failure it returns a
// non-nil *Error to answer with, and the Message carries the id to answer
// with when one was readable (else the zero ID, encoded as null). A batch
// is refused with InvalidRequest after the body is known to be valid JSON,
// so garbage is still a ParseError.
func (d *Decoder) Decode(data []byte) (Message, *Error) {
	tape, ok := newTape(data)
	if !ok {
		return Message{}, checkText(data)
	}
	i := skipSpace(data, 0)
	switch data[i] {
	case '{':
		m, err := d.decodeObject(tape, data[i:])
		m.Tape = tape
		return m, err
	case '[':
		return Message{}, errBatch
	}
	return Message{}, errInvalid
}

// DecodeBatch decodes a body that is a JSON array of messages. A body that
// is not valid JSON is a ParseError, one that is not an array or is empty is
// InvalidRequest; otherwise every element yields a BatchItem, invalid ones
// with their own error. A batch of more than max elements (max > 0) is
// InvalidRequest too, found before any element past max is decoded, so
// that refusing a huge batch costs no more than a full one. Pitfall: MCP
// allows batches only in 2025-03-26, and never with initialize in them:
// the transport decides.
func (d *Decoder) DecodeBatch(data []byte, max int) ([]BatchItem, *Error) {
	if err := checkText(data); err != nil {
		return nil, err
	}
	i := skipSpace(data, 0)
	if data[i] != '[' {
		return nil, errNotBatch
	}
	var items []BatchItem
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != ']' {
		if max > 0 && len(items) == max {
			return nil, BatchTooLarge(max)
		}
		start := i
		i = skipValue(data, i)
		el := data[start:i]
		var it BatchItem
		if el[0] == '{' {
			it.Msg, it.Err = d.decodeObject(nil, el)
		} else {
			it.Err = errInvalid
		}
		items = append(items, it)
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	if len(items) == 0 {
		return nil, errEmptyBatch
	}
	return items, nil
}

// member bits, to detect duplicates and presence.
const (
	hasVersion = 1 << iota
	hasID
	hasMethod
	hasParams
	hasResult
	hasError
)

// decodeObject decodes one valid JSON object as a message.
func (d *Decoder) decodeObject(tape *Tape, obj []byte) (Message, *Error) {
	var (
		m       Message
		seen    int
		version []byte
		idRaw   []byte
		method  []byte
		errRaw  []byte
		bad     *Error
	)
	_ = tape.EachMember(obj, func(key, val []byte) error {
		var bit int
		switch {
		case KeyIs(key, "jsonrpc"):
			bit, version = hasVersion, val
		case KeyIs(key, "id"):
			bit, idRaw = hasID, val
		case KeyIs(key, "method"):
			bit, method = hasMethod, val
		case KeyIs(key, "params"):
			bit = hasParams
			switch val[0] {
			case '{', '[':
				m.Params = val
			case 'n':
				m.Params = nil
			default:
				if bad == nil {
					bad = errParams
				}
			}
		case KeyIs(key, "result"):
			bit, m.Result = hasResult, val
		case KeyIs(key, "error"):
			bit, errRaw = hasError, val
		default:
			return nil
		}
		if seen&bit != 0 && bad == nil {
			bad = errDuplicate
		}
		seen |= bit
		return nil
	})

	// The id first, so that later errors can echo it.
	nullID := false
	if seen&hasID != 0 {
		if string(idRaw) == "null" {
			nullID = true
		} else if id, ok := ParseID(idRaw); ok {
			m.ID = id
		} else {
			return Message{}, errID
		}
	}
	if bad != nil {
		return m, bad
	}
	if seen&hasVersion == 0 || !isVersion2(version) {
		return m, errVersion
	}
	if seen&hasMethod != 0 {
		if seen&(hasResult|hasError) != 0 || nullID {
			if nullID {
				return m, errID
			}
			return m, errShape
		}
		if len(method) == 0 || method[0] != '"' {
			return m, errMethod
		}
		m.Method = d.methodName(method)
		if seen&hasID != 0 {
			m.Kind = KindRequest
		} else {
			m.Kind = KindNotification
		}
		return m, nil
	}
	m.Params = nil
	switch seen & (hasResult | hasError) {
	case hasResult:
		if seen&hasID == 0 || nullID {
			return m, errShape
		}
		m.Kind = KindResponse
		return m, nil
	case hasError:
		if seen&hasID == 0 {
			return m, errShape
		}
		e, ok := decodeErrorObject(errRaw)
		if !ok {
			return m, errErrorObject
		}
		m.Kind, m.Error, m.Result = KindErrorResponse, e, nil
		return m, nil
	}
	m.Result = nil
	return m, errShape
}

func isVersion2(raw []byte) bool {
	if string(raw) == `"2.0"` {
		return true
	}
	s, ok := unquote(raw)
	return ok && s == "2.0"
}

func (d *Decoder) methodName(raw []byte) string {
	body := raw[1 : len(raw)-1]
	if s, ok := d.intern[string(body)]; ok {
		return s
	}
	s, _ := unquote(raw)
	return s
}

// decodeErrorObject reads {"code": int, "message": string, "data"?: any}.
func decodeErrorObject(raw []byte) (*Error, bool) {
	if raw[0] != '{' {
		return nil, false
	}
	var (
		e               Error
		gotCode, gotMsg bool
		ok              = true
	)
	_ = EachMember(raw, func(key, val []byte) error {
		switch {
		case KeyIs(key, "code"):
			id, isInt := ParseID(val)
			n, isNum := id.IntValue()
			if !isInt || !isNum || n != int64(int(n)) {
				ok = false
			}
			e.Code, gotCode = int(n), true
		case KeyIs(key, "message"):
			s, isStr := unquote(val)
			if !isStr {
				ok = false
			}
			e.Message, gotMsg = s, true
		case KeyIs(key, "data"):
			e.Data = json.RawMessage(val)
		}
		return nil
	})
	if !ok || !gotCode || !gotMsg {
		return nil, false
	}
	return &e, true
}
