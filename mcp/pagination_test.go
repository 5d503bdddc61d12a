package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
)

type page struct {
	Result struct {
		Tools      []struct{ Name string } `json:"tools"`
		NextCursor string                  `json:"nextCursor"`
	} `json:"result"`
	Error *struct{ Code int } `json:"error"`
}

func listPage(t *testing.T, e *engine, cursor string) page {
	t.Helper()
	params := ""
	if cursor != "" {
		params = fmt.Sprintf(`{"cursor":%q}`, cursor)
	}
	out, _ := roundTrip(t, e, Rev20251125, req("1", "tools/list", params), nil)
	var p page
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPagination(t *testing.T) {
	s := NewServer(Implementation{Name: "p", Version: "1"}, &ServerOptions{PageSize: 3})
	h := func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) { return nil, nil }
	for i := range 8 {
		if err := s.AddToolRaw(&Tool{Name: fmt.Sprintf("t%d", i), Description: "d"}, h); err != nil {
			t.Fatal(err)
		}
	}
	e := newEngine(s, engineOptions{})
	var names []string
	cursor := ""
	for n := 0; ; n++ {
		p := listPage(t, e, cursor)
		if p.Error != nil {
			t.Fatalf("error %d", p.Error.Code)
		}
		for _, tl := range p.Result.Tools {
			names = append(names, tl.Name)
		}
		if n == 0 {
			// A change between pages: the next page continues after t2.
			s.RemoveTools("t1")
			_ = s.AddToolRaw(&Tool{Name: "t10", Description: "d"}, h)
		}
		cursor = p.Result.NextCursor
		if cursor == "" {
			break
		}
	}
	want := "[t0 t1 t2 t3 t4 t5 t6 t7]"
	if fmt.Sprint(names) != want {
		t.Errorf("got %v, want %s", names, want)
	}

	first := listPage(t, e, "")
	good := first.Result.NextCursor
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	raw[1] ^= 1 // change the key inside the cursor
	tampered := base64.RawURLEncoding.EncodeToString(raw)
	other := NewServer(Implementation{Name: "o", Version: "1"}, &ServerOptions{PageSize: 3})
	foreign := other.keys.Sign('t', "t2")
	promptCursor := s.keys.Sign('p', "t2")
	for _, c := range []string{"garbage!", "AAAA", tampered, foreign, promptCursor} {
		if p := listPage(t, e, c); p.Error == nil || p.Error.Code != -32602 {
			t.Errorf("cursor %q accepted", c)
		}
	}
	// A shared key makes cursors portable across replicas.
	key := []byte("0123456789abcdef0123456789abcdef")
	a := NewServer(Implementation{Name: "a", Version: "1"}, &ServerOptions{Keys: [][]byte{key}})
	b := NewServer(Implementation{Name: "b", Version: "1"}, &ServerOptions{Keys: [][]byte{key}})
	if _, err := b.keys.Verify('t', a.keys.Sign('t', "x")); err != nil {
		t.Error("shared Keys")
	}
	key[0] = 'X' // the Server copied it
	if _, err := b.keys.Verify('t', a.keys.Sign('t', "x")); err != nil {
		t.Error("the Server must copy Keys")
	}
}

func TestPaginationPastTheEnd(t *testing.T) {
	s := NewServer(Implementation{Name: "p", Version: "1"}, &ServerOptions{PageSize: 2})
	_ = s.AddToolRaw(&Tool{Name: "a"}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) { return nil, nil })
	e := newEngine(s, engineOptions{})
	p := listPage(t, e, s.keys.Sign('t', "zzz"))
	if p.Error != nil || len(p.Result.Tools) != 0 || p.Result.NextCursor != "" {
		t.Errorf("got %+v", p)
	}
}
