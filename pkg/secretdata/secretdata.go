// Package secretdata shows Secrets without their values: what the work
// agent reports of a Secret it compares, and what the MCP server returns of
// one, say each value's size and whether it differs, never the value.
package secretdata

import (
	"encoding/base64"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// IsSecret reports whether obj is a core Secret.
func IsSecret(obj *unstructured.Unstructured) bool {
	return obj != nil && obj.GetAPIVersion() == "v1" && obj.GetKind() == "Secret"
}

// Withhold replaces each value of the data and stringData of the Secrets
// among objs, and their last-applied annotation (which holds the values),
// with its size: "(withheld: 12 bytes)". objs are versions of one Secret
// compared with each other (the live object and what applying would make
// of it, or one object on several clusters); nil ones and objects that are
// no Secret are skipped. Where a value differs among objs, each version
// also says which of its values it holds, numbered in the order of objs:
// "(withheld: 12 bytes, value 2)". Equal values so look equal and
// different ones differ, and nothing is shown that would tell a value
// outside this comparison, such as a digest a short password could be
// guessed against. hint, when set, ends each: how to read the values.
func Withhold(hint string, objs ...*unstructured.Unstructured) {
	type slot struct{ field, key string }
	var secrets []*unstructured.Unstructured
	// The distinct values of each key, in the order of objs.
	values := map[slot][]string{}
	add := func(s slot, v string) {
		if !slices.Contains(values[s], v) {
			values[s] = append(values[s], v)
		}
	}
	for _, obj := range objs {
		if !IsSecret(obj) {
			continue
		}
		secrets = append(secrets, obj)
		for _, field := range []string{"data", "stringData"} {
			m, _ := obj.Object[field].(map[string]any)
			for k, v := range m {
				add(slot{field, k}, fmt.Sprint(v))
			}
		}
		if v, ok := obj.GetAnnotations()[corev1.LastAppliedConfigAnnotation]; ok {
			add(slot{"annotation", corev1.LastAppliedConfigAnnotation}, v)
		}
	}
	withheld := func(s slot, v string) string {
		n := len(v)
		if s.field == "data" {
			if decoded, err := base64.StdEncoding.DecodeString(v); err == nil {
				n = len(decoded)
			}
		}
		text := fmt.Sprintf("withheld: %d bytes", n)
		if vs := values[s]; len(vs) > 1 {
			text += fmt.Sprintf(", value %d", slices.Index(vs, v)+1)
		}
		if hint != "" {
			text += "; " + hint
		}
		return "(" + text + ")"
	}
	for _, obj := range secrets {
		for _, field := range []string{"data", "stringData"} {
			m, _ := obj.Object[field].(map[string]any)
			for k, v := range m {
				m[k] = withheld(slot{field, k}, fmt.Sprint(v))
			}
		}
		if a := obj.GetAnnotations(); a != nil {
			if v, ok := a[corev1.LastAppliedConfigAnnotation]; ok {
				a[corev1.LastAppliedConfigAnnotation] = withheld(slot{"annotation", corev1.LastAppliedConfigAnnotation}, v)
				obj.SetAnnotations(a)
			}
		}
	}
}
