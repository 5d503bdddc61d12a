package wire

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"
)

func TestAppendResponseShapes(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{string(AppendResponse(nil, Int(1), []byte(`{}`))), `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{string(AppendResponse(nil, StringID("1"), []byte(`{"a":1}`))), `{"jsonrpc":"2.0","id":"1","result":{"a":1}}`},
		{string(AppendErrorResponse(nil, ID{}, NewError(ParseError, "Parse error"))), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		{string(AppendErrorResponse(nil, Int(2), &Error{Code: ResourceNotFound, Message: "Resource not found", Data: map[string]string{"uri": "x://a"}})), `{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"x://a"}}}`},
		{string(AppendErrorResponse(nil, Int(2), &Error{Code: 1, Message: "bad\xff", Data: "\xfe"})), `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"bad` + "\uFFFD" + `"}}`},
		{string(AppendErrorResponse(nil, Int(2), &Error{Code: 1, Message: "m", Data: func() {}})), `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}`},
		{string(AppendNotification(nil, "notifications/progress", []byte(`{"progress":1}`))), `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`},
		{string(AppendNotification(nil, "n", nil)), `{"jsonrpc":"2.0","method":"n"}`},
		{string(AppendRequest(nil, StringID("s1"), "roots/list", nil)), `{"jsonrpc":"2.0","method":"roots/list","id":"s1"}`},
		{string(AppendRequest(nil, Int(9), "ping", []byte(`{}`))), `{"jsonrpc":"2.0","method":"ping","params":{},"id":9}`},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got  %s\nwant %s", tt.got, tt.want)
		}
		if !json.Valid([]byte(tt.got)) || !utf8.ValidString(tt.got) {
			t.Errorf("not valid JSON/UTF-8: %q", tt.got)
		}
	}
}

func TestMarshalRefusesInvalidUTF8(t *testing.T) {
	type inner struct{ S string }
	bad := []any{
		"x\xffy",
		map[string]any{"k": []any{"ok", "\xfe"}},
		map[string]int{"\xff": 1},
		&inner{S: "\xc3"},
		json.RawMessage("\"\xfe\""),
	}
	for _, v := range bad {
		if _, err := Marshal(v); !errors.Is(err, ErrInvalidUTF8) {
			t.Errorf("%#v: err = %v, want ErrInvalidUTF8", v, err)
		}
	}
	good := []any{
		"a literal \\ufffd escape",
		"a real \uFFFD replacement char",
		json.RawMessage(`"\ufffd"`),
		map[string]any{"b": []byte{0xff}},
	}
	for _, v := range good {
		if _, err := Marshal(v); err != nil {
			t.Errorf("%#v: %v", v, err)
		}
	}
	if _, err := Marshal(make(chan int)); err == nil {
		t.Error("Marshal(chan) succeeded")
	}
}

func TestErrorType(t *testing.T) {
	e := Errorf(InvalidParams, "unknown tool %q", "x")
	if e.Error() != `jsonrpc: -32602 unknown tool "x"` {
		t.Error(e.Error())
	}
	var err error = e
	if !errors.Is(err, NewError(InvalidParams, "")) || errors.Is(err, NewError(InternalError, "")) {
		t.Error("Is by code")
	}
}

func TestBufferPool(t *testing.T) {
	b := GetBuffer()
	*b = append(*b, "x"...)
	PutBuffer(b)
	if b2 := GetBuffer(); len(*b2) != 0 {
		t.Error("pooled buffer not reset")
	}
	big := make([]byte, 0, maxPooled+1)
	PutBuffer(&big)
	PutBuffer(nil)
}

func TestMarshalKeepsHTMLCharacters(t *testing.T) {
	out, err := Marshal(map[string]string{"notes": "<b>a & b</b>\u2028"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"notes":"<b>a & b</b>\u2028"}`; string(out) != want {
		t.Errorf("Marshal = %s, want %s", out, want)
	}
}
