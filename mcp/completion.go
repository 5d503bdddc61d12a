package mcp

import "strconv"

// MaxCompletionValues is the most values one completion/complete answer
// may carry (the spec's limit); the engine truncates longer lists.
const MaxCompletionValues = 100

// CompletionRef says what is being completed: a prompt argument
// (Type "ref/prompt", Name) or a resource template variable (Type
// "ref/resource", URI = the template).
type CompletionRef struct {
	Type string
	Name string
	URI  string
}

// CompleteRequest is the request of completion/complete.
type CompleteRequest struct {
	Request
	Ref CompletionRef
	// ArgumentName and ArgumentValue are the argument being completed and
	// what the user typed so far.
	ArgumentName  string
	ArgumentValue string
	// Context holds already-resolved arguments (06+); never nil.
	Context map[string]string
}

// CompleteResult is a completion/complete answer. Values beyond
// MaxCompletionValues are cut; when Total is 0 the engine sets it to the
// untruncated count, and HasMore is set when values were cut.
type CompleteResult struct {
	Values  []string
	Total   int
	HasMore bool
}

func encodeComplete(r *CompleteResult) ([]byte, error) {
	values := r.Values
	total, more := r.Total, r.HasMore
	if total == 0 {
		total = len(values)
	}
	if len(values) > MaxCompletionValues {
		values, more = values[:MaxCompletionValues], true
	}
	return marshalWith(func(e *encoder) {
		e.open()
		e.key("completion")
		e.open()
		e.key("values")
		e.b = append(e.b, '[')
		for i, v := range values {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(v)
		}
		e.b = append(e.b, ']')
		e.key("total")
		e.b = strconv.AppendInt(e.b, int64(total), 10)
		e.boolField("hasMore", more)
		e.close()
		e.close()
	})
}
