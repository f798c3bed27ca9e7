package cli

import (
	"encoding/json"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"
)

// PrintManifests writes objs as a YAML stream ("yaml", documents separated by
// "---") or as one JSON v1 List ("json"), the way `kubectl apply --dry-run=client
// -o yaml|json` prints manifests.
func PrintManifests(out io.Writer, objs []*unstructured.Unstructured, format string) error {
	switch format {
	case "yaml":
		for i, obj := range objs {
			data, err := yaml.Marshal(obj.Object)
			if err != nil {
				return fmt.Errorf("encode %s %s: %w", obj.GetKind(), obj.GetName(), err)
			}
			if i > 0 {
				fmt.Fprintln(out, "---")
			}
			if _, err := out.Write(data); err != nil {
				return err
			}
		}
		return nil
	case "json":
		items := make([]any, 0, len(objs))
		for _, obj := range objs {
			items = append(items, obj.Object)
		}
		data, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "    ")
		if err != nil {
			return fmt.Errorf("encode manifests: %w", err)
		}
		_, err = fmt.Fprintln(out, string(data))
		return err
	}
	return fmt.Errorf("output format %q is not supported for manifests: use yaml or json", format)
}

// PrintJSON writes v as indented JSON.
func PrintJSON(out io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err = fmt.Fprintln(out, string(data))
	return err
}

// PrintYAML writes v as YAML.
func PrintYAML(out io.Writer, v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode YAML: %w", err)
	}
	_, err = out.Write(data)
	return err
}

// PrintItems prints the items of list with printer after stamping each with
// gvk (objects read with a typed client carry no kind): the whole list as one
// object when asList (json or yaml of everything listed), else each item on
// its own (-o name, or the one object a user named).
func PrintItems[T any, PT interface {
	*T
	runtime.Object
}](out io.Writer, printer printers.ResourcePrinter, list runtime.Object, items []T, gvk schema.GroupVersionKind, asList bool) error {
	for i := range items {
		PT(&items[i]).GetObjectKind().SetGroupVersionKind(gvk)
	}
	if asList {
		return printer.PrintObj(list, out)
	}
	for i := range items {
		if err := printer.PrintObj(PT(&items[i]), out); err != nil {
			return err
		}
	}
	return nil
}

// PrintTable prints table as kubectl get prints its tables, with the
// columns of priority 1 only when wide.
func PrintTable(out io.Writer, table *metav1.Table, wide bool) error {
	return printers.NewTablePrinter(printers.PrintOptions{Wide: wide}).PrintObj(table, out)
}

// ListOutput says how PrintList prints what a get verb listed.
type ListOutput struct {
	// Empty is written to ErrOut instead of an empty table, as kubectl's
	// "No resources found".
	Empty string
	// WithNamespace adds a NAMESPACE column to the table (-A).
	WithNamespace bool
	// Named is true when the user named the one object to print: json and
	// yaml print that object rather than a List.
	Named bool
}

// PrintList prints the items of list the way kubectl get does: with -o
// json, yaml, name, jsonpath or a template through the printer of flags,
// else as the table that table builds (called only then), wide columns
// included with -o wide.
func PrintList[T any, PT interface {
	*T
	runtime.Object
}](streams genericiooptions.IOStreams, flags *genericclioptions.PrintFlags, list runtime.Object, items []T, gvk schema.GroupVersionKind,
	table func() (*metav1.Table, error), opts ListOutput) error {
	format := Output(flags)
	if format != "" && format != "wide" {
		printer, err := flags.ToPrinter()
		if err != nil {
			return err
		}
		return PrintItems[T, PT](streams.Out, printer, list, items, gvk, !opts.Named && format != "name")
	}
	if len(items) == 0 {
		fmt.Fprintln(streams.ErrOut, opts.Empty)
		return nil
	}
	t, err := table()
	if err != nil {
		return err
	}
	return printers.NewTablePrinter(printers.PrintOptions{Wide: format == "wide", WithNamespace: opts.WithNamespace}).PrintObj(t, streams.Out)
}
