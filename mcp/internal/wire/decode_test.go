package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		kind     Kind
		code     int // 0 = success
		id       string
		method   string
		params   string
		result   string
		errCode  int
		errorMsg string
	}{
		{name: "request int id", in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, kind: KindRequest, id: "1", method: "ping"},
		{name: "request string id", in: `{"jsonrpc":"2.0","id":"1","method":"ping"}`, kind: KindRequest, id: `"1"`, method: "ping"},
		{name: "request negative id", in: `{"jsonrpc":"2.0","id":-7,"method":"x"}`, kind: KindRequest, id: "-7", method: "x"},
		{name: "request max int64", in: `{"jsonrpc":"2.0","id":9223372036854775807,"method":"x"}`, kind: KindRequest, id: "9223372036854775807", method: "x"},
		{name: "escaped string id", in: `{"jsonrpc":"2.0","id":"a\"b\u00e9","method":"x"}`, kind: KindRequest, id: `"a\"bé"`, method: "x"},
		{name: "params kept raw", in: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"e", "arguments":{"text":"hi"}}}`, kind: KindRequest, id: "2", method: "tools/call", params: `{"name":"e", "arguments":{"text":"hi"}}`},
		{name: "params array", in: `{"jsonrpc":"2.0","id":2,"method":"m","params":[1,2]}`, kind: KindRequest, id: "2", method: "m", params: `[1,2]`},
		{name: "params null is absent", in: `{"jsonrpc":"2.0","id":2,"method":"m","params":null}`, kind: KindRequest, id: "2", method: "m"},
		{name: "members in any order with space", in: " \n{ \"method\" : \"m\" , \"params\" : { } , \"id\" : 3 , \"jsonrpc\" : \"2.0\" } \n", kind: KindRequest, id: "3", method: "m", params: `{ }`},
		{name: "escaped member name", in: `{"jsonrpc":"2.0","id":1,"\u006dethod":"ping"}`, kind: KindRequest, id: "1", method: "ping"},
		{name: "escaped method", in: `{"jsonrpc":"2.0","id":1,"method":"pi\u006eg"}`, kind: KindRequest, id: "1", method: "ping"},
		{name: "unknown members ignored", in: `{"jsonrpc":"2.0","id":1,"method":"ping","extra":[1,{"a":"]"}]}`, kind: KindRequest, id: "1", method: "ping"},
		{name: "notification", in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, kind: KindNotification, id: "null", method: "notifications/initialized"},
		{name: "response", in: `{"jsonrpc":"2.0","id":"s-1","result":{"roots":[]}}`, kind: KindResponse, id: `"s-1"`, result: `{"roots":[]}`},
		{name: "error response", in: `{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"User rejected","data":{"x":1}}}`, kind: KindErrorResponse, id: "4", errCode: -1, errorMsg: "User rejected"},
		{name: "error response null id", in: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, kind: KindErrorResponse, id: "null", errCode: -32700, errorMsg: "Parse error"},

		{name: "parse error", in: `{"jsonrpc":"2.0",`, code: ParseError, id: "null"},
		{name: "empty body", in: ``, code: ParseError, id: "null"},
		{name: "whitespace body", in: "  \n", code: ParseError, id: "null"},
		{name: "trailing garbage", in: `{"jsonrpc":"2.0","id":1,"method":"x"} x`, code: ParseError, id: "null"},
		{name: "two objects", in: `{"jsonrpc":"2.0","id":1,"method":"x"}{"jsonrpc":"2.0","id":2,"method":"x"}`, code: ParseError, id: "null"},
		{name: "invalid utf8 in string", in: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\xff\"}", code: ParseError, id: "null"},
		{name: "invalid utf8 in unknown member", in: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"z\":\"\xc3\"}", code: ParseError, id: "null"},
		{name: "deep nesting", in: strings.Repeat("[", 100000), code: ParseError, id: "null"},
		{name: "deep nesting closed", in: `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`, code: ParseError, id: "null"},
		{name: "scalar", in: `42`, code: InvalidRequest, id: "null"},
		{name: "string", in: `"x"`, code: InvalidRequest, id: "null"},
		{name: "batch refused", in: `[{"jsonrpc":"2.0","id":1,"method":"x"}]`, code: InvalidRequest, id: "null"},
		{name: "empty array refused", in: `[]`, code: InvalidRequest, id: "null"},
		{name: "missing jsonrpc", in: `{"id":1,"method":"x"}`, code: InvalidRequest, id: "1"},
		{name: "jsonrpc 1.0", in: `{"jsonrpc":"1.0","id":1,"method":"x"}`, code: InvalidRequest, id: "1"},
		{name: "jsonrpc number", in: `{"jsonrpc":2.0,"id":1,"method":"x"}`, code: InvalidRequest, id: "1"},
		{name: "JSONRPC upper case", in: `{"JSONRPC":"2.0","id":1,"method":"x"}`, code: InvalidRequest, id: "1"},
		{name: "Method upper case", in: `{"jsonrpc":"2.0","id":1,"Method":"x"}`, code: InvalidRequest, id: "1"},
		{name: "null id", in: `{"jsonrpc":"2.0","id":null,"method":"x"}`, code: InvalidRequest, id: "null"},
		{name: "fraction id", in: `{"jsonrpc":"2.0","id":1.5,"method":"x"}`, code: InvalidRequest, id: "null"},
		{name: "integral fraction id", in: `{"jsonrpc":"2.0","id":1.0,"method":"x"}`, code: InvalidRequest, id: "null"},
		{name: "exponent id", in: `{"jsonrpc":"2.0","id":1e3,"method":"x"}`, code: InvalidRequest, id: "null"},
		{name: "bool id", in: `{"jsonrpc":"2.0","id":true,"method":"x"}`, code: InvalidRequest, id: "null"},
		{name: "object id", in: `{"jsonrpc":"2.0","id":{},"method":"x"}`, code: InvalidRequest, id: "null"},
		{name: "array id", in: `{"jsonrpc":"2.0","id":[1],"method":"x"}`, code: InvalidRequest, id: "null"},
		{name: "id beyond int64", in: `{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}`, code: InvalidRequest, id: "null"},
		{name: "id below int64", in: `{"jsonrpc":"2.0","id":-9223372036854775809,"method":"x"}`, code: InvalidRequest, id: "null"},
		{name: "method number", in: `{"jsonrpc":"2.0","id":1,"method":5}`, code: InvalidRequest, id: "1"},
		{name: "method null", in: `{"jsonrpc":"2.0","id":1,"method":null}`, code: InvalidRequest, id: "1"},
		{name: "params string", in: `{"jsonrpc":"2.0","id":1,"method":"x","params":"a"}`, code: InvalidRequest, id: "1"},
		{name: "params number", in: `{"jsonrpc":"2.0","id":1,"method":"x","params":1}`, code: InvalidRequest, id: "1"},
		{name: "duplicate method", in: `{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, code: InvalidRequest, id: "1"},
		{name: "duplicate id", in: `{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}`, code: InvalidRequest, id: "2"},
		{name: "duplicate via escape", in: `{"jsonrpc":"2.0","id":1,"method":"a","\u006dethod":"b"}`, code: InvalidRequest, id: "1"},
		{name: "method and result", in: `{"jsonrpc":"2.0","id":1,"method":"a","result":{}}`, code: InvalidRequest, id: "1"},
		{name: "result and error", in: `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, code: InvalidRequest, id: "1"},
		{name: "no method no result", in: `{"jsonrpc":"2.0","id":1}`, code: InvalidRequest, id: "1"},
		{name: "empty object", in: `{}`, code: InvalidRequest, id: "null"},
		{name: "response without id", in: `{"jsonrpc":"2.0","result":{}}`, code: InvalidRequest, id: "null"},
		{name: "response null id", in: `{"jsonrpc":"2.0","id":null,"result":{}}`, code: InvalidRequest, id: "null"},
		{name: "error without code", in: `{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}`, code: InvalidRequest, id: "1"},
		{name: "error fractional code", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, code: InvalidRequest, id: "1"},
		{name: "error not object", in: `{"jsonrpc":"2.0","id":1,"error":"bad"}`, code: InvalidRequest, id: "1"},
		{name: "error message not string", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":2}}`, code: InvalidRequest, id: "1"},
	}
	d := NewDecoder("ping")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := d.Decode([]byte(tt.in))
			if got := m.ID.String(); got != tt.id {
				t.Errorf("id = %s, want %s", got, tt.id)
			}
			if tt.code != 0 {
				if err == nil {
					t.Fatalf("got %+v, want error %d", m, tt.code)
				}
				if err.Code != tt.code {
					t.Fatalf("code = %d (%s), want %d", err.Code, err.Message, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if m.Kind != tt.kind || m.Method != tt.method {
				t.Fatalf("got kind %v method %q, want %v %q", m.Kind, m.Method, tt.kind, tt.method)
			}
			if string(m.Params) != tt.params {
				t.Errorf("params = %q, want %q", m.Params, tt.params)
			}
			if string(m.Result) != tt.result {
				t.Errorf("result = %q, want %q", m.Result, tt.result)
			}
			if tt.errCode != 0 {
				if m.Error == nil || m.Error.Code != tt.errCode || m.Error.Message != tt.errorMsg {
					t.Errorf("error = %+v", m.Error)
				}
			}
		})
	}
}

func TestDecodeIDTypeRoundTrip(t *testing.T) {
	for _, in := range []string{`"1"`, `1`, `0`, `-0`, `""`, `"\u00e9"`, `-42`} {
		m, err := Decode([]byte(`{"jsonrpc":"2.0","method":"m","id":` + in + `}`))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		out := AppendResponse(nil, m.ID, []byte(`{}`))
		var back struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		var a, b any
		_ = json.Unmarshal([]byte(in), &a)
		_ = json.Unmarshal(back.ID, &b)
		if a != b {
			t.Errorf("id %s echoed as %s", in, back.ID)
		}
		if (in[0] == '"') != m.ID.IsString() {
			t.Errorf("id %s lost its type", in)
		}
	}
}

func TestDecodeBatch(t *testing.T) {
	items, err := DecodeBatch([]byte(`[{"jsonrpc":"2.0","id":1,"method":"a"}, 5, {"jsonrpc":"2.0","method":"n"}, {"jsonrpc":"2.0","id":true,"method":"a"},{"jsonrpc":"2.0","id":"r","result":1}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 5 {
		t.Fatalf("got %d items", len(items))
	}
	want := []struct {
		kind Kind
		code int
	}{{KindRequest, 0}, {KindInvalid, InvalidRequest}, {KindNotification, 0}, {KindInvalid, InvalidRequest}, {KindResponse, 0}}
	for i, w := range want {
		gotCode := 0
		if items[i].Err != nil {
			gotCode = items[i].Err.Code
		}
		if items[i].Msg.Kind != w.kind || gotCode != w.code {
			t.Errorf("item %d: kind %v code %d, want %v %d", i, items[i].Msg.Kind, gotCode, w.kind, w.code)
		}
	}
	for _, tc := range []struct {
		in   string
		code int
	}{{`[]`, InvalidRequest}, {` [ ] `, InvalidRequest}, {`{"jsonrpc":"2.0","id":1,"method":"a"}`, InvalidRequest}, {`[{"jsonrpc"`, ParseError}, {"[\"\xff\"]", ParseError}} {
		if _, err := DecodeBatch([]byte(tc.in)); err == nil || err.Code != tc.code {
			t.Errorf("%s: err = %v, want %d", tc.in, err, tc.code)
		}
	}
	if !IsBatch([]byte(" \n[")) || IsBatch([]byte(`{}`)) || IsBatch(nil) {
		t.Error("IsBatch")
	}
}

func TestDecodeInternsKnownMethods(t *testing.T) {
	d := NewDecoder("tools/call")
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := d.Decode(body); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Decode allocates %v times for an integer id and a known method", allocs)
	}
}

func TestEachMember(t *testing.T) {
	var keys []string
	err := EachMember([]byte(` { "a" : 1 , "b\"" : {"x":[1,"}"]}, "c":"\\"} `), func(k, v []byte) error {
		keys = append(keys, Key(k)+"="+string(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(keys, "|"); got != `a=1|b"={"x":[1,"}"]}|c="\\"` {
		t.Errorf("got %s", got)
	}
	if EachMember([]byte(`[1]`), func(k, v []byte) error { return nil }) == nil {
		t.Error("array accepted as object")
	}
	if err := EachMember([]byte(`{}`), func(k, v []byte) error { t.Error("called"); return nil }); err != nil {
		t.Error(err)
	}
	// Malformed input never panics.
	for _, s := range []string{`{`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `{1:2}`, `{"a" 1}`, `{"a":1 "b":2}`} {
		_ = EachMember([]byte(s), func(k, v []byte) error { return nil })
	}
}

func TestIDMethods(t *testing.T) {
	if !Int(3).IsInt() || Int(3).IsString() || StringID("a").IsInt() || !(ID{}).IsZero() {
		t.Error("kind predicates")
	}
	if n, ok := Int(3).IntValue(); !ok || n != 3 {
		t.Error("IntValue")
	}
	if s, ok := StringID("a").StringValue(); !ok || s != "a" {
		t.Error("StringValue")
	}
	if Int(1) == StringID("1") {
		t.Error("integer 1 and string \"1\" must differ")
	}
	var id ID
	if err := json.Unmarshal([]byte(`"x"`), &id); err != nil || id != StringID("x") {
		t.Error("UnmarshalJSON string")
	}
	if err := json.Unmarshal([]byte(`1.5`), &id); err == nil {
		t.Error("UnmarshalJSON accepted 1.5")
	}
	if err := json.Unmarshal([]byte(`null`), &id); err != nil || !id.IsZero() {
		t.Error("UnmarshalJSON null")
	}
	b, _ := json.Marshal(map[string]ID{"a": Int(7), "b": StringID("7"), "c": {}})
	if string(b) != `{"a":7,"b":"7","c":null}` {
		t.Errorf("MarshalJSON: %s", b)
	}
}
