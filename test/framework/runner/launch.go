package runner

import (
	"context"
	"fmt"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// runnerPodIP is what the Runner reports as a pod's and a host's IP address.
const runnerPodIP = "127.0.0.1"

// envVar is one resolved environment variable of a container.
type envVar struct{ name, value string }

// podFields are the pod fields a container's env may reference through
// valueFrom.fieldRef.
type podFields struct {
	namespace, name, serviceAccount string
	labels, annotations             map[string]string
}

// objectSource reads the Secrets and ConfigMaps a container references. Both
// methods return a NotFound API error when the object does not exist; a
// ConfigMap's data and binaryData are merged.
type objectSource interface {
	secretData(ctx context.Context, namespace, name string) (map[string][]byte, error)
	configMapData(ctx context.Context, namespace, name string) (map[string][]byte, error)
}

// pathMapping maps a path inside the pod (a volume's mountPath) to its local
// stand-in on the host.
type pathMapping struct{ from, to string }

// launchInput is everything buildLaunch needs.
type launchInput struct {
	binary     string
	container  *corev1.Container
	extraArgs  []string
	env        []envVar
	mounts     []pathMapping
	kubeconfig string
	home       string
	freePort   func() (int, error)
}

// launchSpec is what the Runner executes for a Deployment.
type launchSpec struct {
	binary string
	args   []string
	env    []string // NAME=value, added to the framework's minimal environment
}

// resolveEnv resolves ctr's envFrom and env in the kubelet's order: envFrom
// sources first, then env entries, a later name replacing an earlier one, and
// $(VAR) references in literal values expanded with the variables before them.
// A missing non-optional Secret, ConfigMap or key is an error.
func resolveEnv(ctx context.Context, src objectSource, pod podFields, ctr *corev1.Container) ([]envVar, error) {
	var vars []envVar
	index := map[string]int{}
	set := func(name, value string) {
		if i, ok := index[name]; ok {
			vars[i].value = value
			return
		}
		index[name] = len(vars)
		vars = append(vars, envVar{name, value})
	}
	lookup := func(name string) (string, bool) {
		if i, ok := index[name]; ok {
			return vars[i].value, true
		}
		return "", false
	}
	for _, from := range ctr.EnvFrom {
		var data map[string][]byte
		var err error
		var optional *bool
		switch {
		case from.SecretRef != nil:
			optional = from.SecretRef.Optional
			data, err = src.secretData(ctx, pod.namespace, from.SecretRef.Name)
			err = describeMissing(err, "Secret", pod.namespace, from.SecretRef.Name)
		case from.ConfigMapRef != nil:
			optional = from.ConfigMapRef.Optional
			data, err = src.configMapData(ctx, pod.namespace, from.ConfigMapRef.Name)
			err = describeMissing(err, "ConfigMap", pod.namespace, from.ConfigMapRef.Name)
		default:
			continue
		}
		if apierrors.IsNotFound(err) && optional != nil && *optional {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("envFrom: %w", err)
		}
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			set(from.Prefix+k, string(data[k]))
		}
	}
	for _, e := range ctr.Env {
		if e.ValueFrom == nil {
			set(e.Name, expandVars(e.Value, lookup))
			continue
		}
		value, ok, err := envValueFrom(ctx, src, pod, e.ValueFrom)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			set(e.Name, value)
		}
	}
	return vars, nil
}

// envValueFrom resolves one valueFrom; ok is false for an optional reference
// to something missing, which leaves the variable unset.
func envValueFrom(ctx context.Context, src objectSource, pod podFields, from *corev1.EnvVarSource) (value string, ok bool, err error) {
	var data map[string][]byte
	var kind, name, key string
	var optional *bool
	switch {
	case from.FieldRef != nil:
		v, err := fieldValue(pod, from.FieldRef.FieldPath)
		return v, err == nil, err
	case from.SecretKeyRef != nil:
		kind, name, key, optional = "Secret", from.SecretKeyRef.Name, from.SecretKeyRef.Key, from.SecretKeyRef.Optional
		data, err = src.secretData(ctx, pod.namespace, name)
	case from.ConfigMapKeyRef != nil:
		kind, name, key, optional = "ConfigMap", from.ConfigMapKeyRef.Name, from.ConfigMapKeyRef.Key, from.ConfigMapKeyRef.Optional
		data, err = src.configMapData(ctx, pod.namespace, name)
	default:
		return "", false, fmt.Errorf("valueFrom %s is not supported by the component runner", describeEnvSource(from))
	}
	isOptional := optional != nil && *optional
	if apierrors.IsNotFound(err) && isOptional {
		return "", false, nil
	}
	if err != nil {
		return "", false, describeMissing(err, kind, pod.namespace, name)
	}
	v, found := data[key]
	if !found {
		if isOptional {
			return "", false, nil
		}
		return "", false, fmt.Errorf("key %q not found in %s %s/%s", key, kind, pod.namespace, name)
	}
	return string(v), true, nil
}

// fieldValue resolves a downward-API field path for the local "pod".
func fieldValue(pod podFields, fieldPath string) (string, error) {
	switch fieldPath {
	case "metadata.namespace":
		return pod.namespace, nil
	case "metadata.name":
		return pod.name, nil
	case "spec.serviceAccountName":
		return pod.serviceAccount, nil
	case "spec.nodeName":
		return "localhost", nil
	case "status.podIP", "status.podIPs", "status.hostIP", "status.hostIPs":
		return runnerPodIP, nil
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": pod.labels, "metadata.annotations": pod.annotations} {
		if rest, ok := strings.CutPrefix(fieldPath, prefix+"['"); ok && strings.HasSuffix(rest, "']") {
			return m[strings.TrimSuffix(rest, "']")], nil
		}
	}
	return "", fmt.Errorf("fieldRef %q is not supported by the component runner", fieldPath)
}

// describeEnvSource names the kind of an unsupported valueFrom.
func describeEnvSource(from *corev1.EnvVarSource) string {
	if from.ResourceFieldRef != nil {
		return "resourceFieldRef " + from.ResourceFieldRef.Resource
	}
	return "of this kind"
}

// describeMissing adds which object was missing to a NotFound error, keeping
// it recognizable as NotFound.
func describeMissing(err error, kind, namespace, name string) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %s/%s not found: %w", kind, namespace, name, err)
	}
	if err != nil {
		return fmt.Errorf("read %s %s/%s: %w", kind, namespace, name, err)
	}
	return nil
}

// expandVars expands $(NAME) references to defined variables as the kubelet
// does: "$$" is a literal "$", and references to undefined variables stay as
// written.
func expandVars(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// buildLaunch computes the process's arguments and environment: command[1:]
// and args with $(VAR) expanded, mount paths rewritten to their local
// directories and bind addresses moved to free loopback ports; the env without
// in-cluster Service variables, with mount paths rewritten, plus KUBECONFIG
// (unless the container sets it) and HOME.
func buildLaunch(in launchInput) (*launchSpec, error) {
	values := map[string]string{}
	for _, e := range in.env {
		values[e.name] = e.value
	}
	lookup := func(name string) (string, bool) { v, ok := values[name]; return v, ok }
	var args []string
	if len(in.container.Command) > 0 {
		args = append(args, in.container.Command[1:]...)
	}
	args = append(args, in.container.Args...)
	args = append(args, in.extraArgs...)
	for i := range args {
		args[i] = rewritePaths(expandVars(args[i], lookup), in.mounts)
	}
	args, err := rewriteBindAddresses(args, in.freePort)
	if err != nil {
		return nil, err
	}
	spec := &launchSpec{binary: in.binary, args: args}
	for _, e := range in.env {
		if isInClusterEnv(e.name) {
			continue
		}
		spec.env = append(spec.env, e.name+"="+rewritePaths(e.value, in.mounts))
	}
	if _, ok := values["KUBECONFIG"]; !ok {
		spec.env = append(spec.env, "KUBECONFIG="+in.kubeconfig)
	}
	if _, ok := values["HOME"]; !ok {
		spec.env = append(spec.env, "HOME="+in.home)
	}
	return spec, nil
}

// isInClusterEnv reports whether name is one of the variables that point an
// in-cluster client at the kubernetes Service, which no local process may use.
func isInClusterEnv(name string) bool {
	return strings.HasPrefix(name, "KUBERNETES_SERVICE_") || strings.HasPrefix(name, "KUBERNETES_PORT")
}

// rewritePaths replaces every occurrence of a mapping's from path in s with its
// local path. A match must start s or follow a character that cannot be part
// of a path (such as '=', ':' or ','), and must end s or be followed by '/' or
// such a character, so "/etc/foo" does not match inside "/etc/foobar" or
// "/x/etc/foo". The longest matching path wins, so nested mounts work.
func rewritePaths(s string, mounts []pathMapping) string {
	if len(mounts) == 0 || !strings.Contains(s, "/") {
		return s
	}
	sorted := make([]pathMapping, 0, len(mounts))
	for _, m := range mounts {
		from := path.Clean(m.from)
		if path.IsAbs(from) && from != "/" {
			sorted = append(sorted, pathMapping{from: from, to: m.to})
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool { return len(sorted[i].from) > len(sorted[j].from) })
	var b strings.Builder
	for i := 0; i < len(s); {
		matched := false
		if i == 0 || !isPathChar(s[i-1]) {
			for _, m := range sorted {
				end := i + len(m.from)
				if strings.HasPrefix(s[i:], m.from) && (end == len(s) || s[end] == '/' || !isPathChar(s[end])) {
					b.WriteString(m.to)
					i, matched = end, true
					break
				}
			}
		}
		if !matched {
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// isPathChar reports whether c commonly appears inside a path.
func isPathChar(c byte) bool {
	return c == '/' || c == '.' || c == '_' || c == '-' || c == '~' ||
		(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// rewriteBindAddresses replaces the value of every --<name>-bind-address flag,
// given as "--flag=value" or "--flag value", with 127.0.0.1:<free port>, unless
// the value is "0" or empty (the listener is disabled) or already a loopback
// address with a port, which a Deployment written for the local environment
// chose (a URL elsewhere names that port).
func rewriteBindAddresses(args []string, freePort func() (int, error)) ([]string, error) {
	out := append([]string(nil), args...)
	addr := func() (string, error) {
		port, err := freePort()
		if err != nil {
			return "", err
		}
		return runnerPodIP + ":" + strconv.Itoa(port), nil
	}
	for i := 0; i < len(out); i++ {
		a := out[i]
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasSuffix(name, "-bind-address") {
			continue
		}
		target := i
		if !hasValue {
			if i+1 >= len(out) || strings.HasPrefix(out[i+1], "-") {
				continue
			}
			target, value = i+1, out[i+1]
			i++
		}
		if value == "0" || value == "" || isLoopbackAddress(value) {
			continue
		}
		a2, err := addr()
		if err != nil {
			return nil, fmt.Errorf("rewrite %s: %w", a, err)
		}
		if hasValue {
			out[target] = a[:strings.Index(a, "=")+1] + a2
		} else {
			out[target] = a2
		}
	}
	return out, nil
}

// isLoopbackAddress reports whether addr is host:port with a loopback IP host
// and a port other than 0.
func isLoopbackAddress(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
