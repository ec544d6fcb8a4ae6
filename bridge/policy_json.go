package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The policy file's JSON read strictly: every field known, every
// error located and worded for the operator.

// parseActions decodes a REPO_ACTIONS_JSON value strictly. It returns the
// problems found (without a slot prefix).
func parseActions(data []byte) (map[string]Action, []string) {
	if errList := checkJSON(data, actionsSchema); len(errList) > 0 {
		return nil, errList
	}
	var actions map[string]Action
	if err := strictDecode(data, &actions); err != "" {
		return nil, []string{err}
	}
	return actions, nil
}

// strictDecode decodes one JSON value refusing unknown fields and trailing
// data. The message it returns holds no JSON values.
func strictDecode(data []byte, v any) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describeJSONError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return "unexpected data after the JSON value"
	}
	return ""
}

func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("field %q: a JSON %s cannot be used here (%s expected)", showSetting(typ.Field), typ.Value, typ.Type)
		}
		return fmt.Sprintf("a JSON %s cannot be used here (%s expected)", typ.Value, typ.Type)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: unexpected end of input"
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, `json: unknown field "`); ok {
		return fmt.Sprintf("unknown field %q", showSetting(strings.TrimSuffix(f, `"`)))
	}
	return "malformed JSON"
}

// jsonSchema describes where objects are structs (with an exact field
// set) and where they are maps, so that checkJSON can refuse what
// encoding/json would let through silently: duplicate keys (the last one
// wins) and field names in another case ("ARGV" for "argv").
type jsonSchema struct {
	fields map[string]*jsonSchema // a struct: its JSON field names
	elem   *jsonSchema            // a map: the schema of its values
}

var leafSchema = &jsonSchema{}

// checkJSON walks data token by token: it must be exactly one JSON object,
// valid UTF-8, with no key repeated in any object and, where the schema
// says struct, only the exact field names. Messages show keys only when
// they cannot be a path.
func checkJSON(data []byte, schema *jsonSchema) []string {
	if !utf8.Valid(data) {
		return []string{"the JSON is not valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return []string{describeJSONError(err)}
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return []string{"must be a JSON object"}
	}
	var errList []string
	if err := walkObject(dec, schema, "", &errList); err != nil {
		return append(errList, describeJSONError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return append(errList, "unexpected data after the JSON object")
	}
	return errList
}

// walkObject reads an object's members after its '{'.
func walkObject(dec *json.Decoder, schema *jsonSchema, where string, errs *[]string) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		at := where + "." + showSetting(key)
		if where == "" {
			at = showSetting(key)
		}
		if seen[key] {
			if where == "" {
				*errs = append(*errs, fmt.Sprintf("duplicate key %q", showSetting(key)))
			} else {
				*errs = append(*errs, fmt.Sprintf("duplicate key %q in %s", showSetting(key), where))
			}
		}
		seen[key] = true
		var child *jsonSchema
		switch {
		case schema == nil:
			child = nil
		case schema.fields != nil:
			if c, ok := schema.fields[key]; ok {
				child = c
			} else {
				child = nil
				if where == "" {
					*errs = append(*errs, fmt.Sprintf("unknown field %q", showSetting(key)))
				} else {
					*errs = append(*errs, fmt.Sprintf("unknown field %q in %s", showSetting(key), where))
				}
			}
		case schema.elem != nil:
			child = schema.elem
		default:
			child = nil
		}
		if err := walkValue(dec, child, at, errs); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

func walkValue(dec *json.Decoder, schema *jsonSchema, where string, errs *[]string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		if schema == leafSchema {
			schema = nil // a type error the decoder reports
		}
		return walkObject(dec, schema, where, errs)
	case json.Delim('['):
		for dec.More() {
			if err := walkValue(dec, nil, where, errs); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ']'
		return err
	}
	return nil
}

var (
	actionSchema = &jsonSchema{fields: map[string]*jsonSchema{
		"kind": leafSchema, "repository": leafSchema, "fetch_urls": leafSchema, "push_urls": leafSchema,
		"workflow": leafSchema, "gh": leafSchema,
		"argv": leafSchema, "mutates": leafSchema, "network": leafSchema, "unix_sockets": leafSchema, "argument": leafSchema,
		"reveal":    leafSchema,
		"integrity": {elem: leafSchema}, "timeout_seconds": leafSchema,
		"argument_allow": {fields: map[string]*jsonSchema{"chars": leafSchema, "directories": leafSchema}},
	}}
	actionsSchema = &jsonSchema{elem: actionSchema}
	workdirSchema = &jsonSchema{fields: map[string]*jsonSchema{
		"root": leafSchema, "read_write": leafSchema, "repo_ops": leafSchema, "actions": actionsSchema,
		"push": {fields: map[string]*jsonSchema{"urls": leafSchema, "branches": leafSchema}},
	}}
	policySchema = &jsonSchema{fields: map[string]*jsonSchema{
		"workdirs": {elem: workdirSchema},
		"sandbox": {fields: map[string]*jsonSchema{"required": leafSchema, "read_paths": leafSchema, "allow_hidden": leafSchema,
			"deny": leafSchema, "max_processes": leafSchema, "max_memory_mb": leafSchema}},
		"workspaces_dir": leafSchema,
		"grants": {fields: map[string]*jsonSchema{"host_id": leafSchema, "public_keys": leafSchema,
			"allow_mutates": leafSchema, "allow_network": leafSchema, "allow_unix_sockets": leafSchema, "timeout_seconds": leafSchema}},
	}}
)
