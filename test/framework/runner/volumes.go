package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/atomicfile"
)

// defaultVolumeMode is the mode of Secret and ConfigMap volume files when the
// volume sets none, as with the kubelet (0644).
const defaultVolumeMode = 0o644

// volumeFile is one file of a Secret, ConfigMap or projected volume.
type volumeFile struct {
	data []byte
	mode os.FileMode
}

// secretData returns the data of Secret namespace/name from the cache.
func (c *clusterRunner) secretData(ctx context.Context, namespace, name string) (map[string][]byte, error) {
	s := &corev1.Secret{}
	if err := c.cache.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s); err != nil {
		return nil, err
	}
	return s.Data, nil
}

// configMapData returns the data and binaryData of ConfigMap namespace/name
// from the cache, merged.
func (c *clusterRunner) configMapData(ctx context.Context, namespace, name string) (map[string][]byte, error) {
	cm := &corev1.ConfigMap{}
	if err := c.cache.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cm); err != nil {
		return nil, err
	}
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	return data, nil
}

// syncVolumes materializes every volume mounted into ctr under the instance's
// volumes directory (emptyDir as an empty directory, Secret, ConfigMap and
// projected Secret/ConfigMap sources as files kept in sync with the objects)
// and returns the mapping from each mountPath to its local path.
//
// As with a kubelet, a missing non-optional object blocks the first start
// (reason FailedMount) but a volume that was filled once keeps its last
// contents; a missing optional object gives an empty directory.
func (c *clusterRunner) syncVolumes(ctx context.Context, inst *instance, namespace string, pod *corev1.PodSpec, ctr *corev1.Container) ([]pathMapping, error) {
	volumes := map[string]*corev1.Volume{}
	for i := range pod.Volumes {
		volumes[pod.Volumes[i].Name] = &pod.Volumes[i]
	}
	synced := map[string]bool{}
	var mounts []pathMapping
	var errs []error
	for _, m := range ctr.VolumeMounts {
		vol, ok := volumes[m.Name]
		if !ok {
			return nil, blockedBy(ReasonCreateContainerConfigError, false, fmt.Errorf("volumeMount %s names no volume of the pod", m.Name))
		}
		local := filepath.Join(inst.dir, "volumes", vol.Name)
		if !synced[vol.Name] {
			synced[vol.Name] = true
			if err := c.syncVolume(ctx, inst, namespace, vol, local); err != nil {
				errs = append(errs, fmt.Errorf("volume %s: %w", vol.Name, err))
			}
		}
		if m.SubPath != "" {
			local = filepath.Join(local, m.SubPath)
		}
		mounts = append(mounts, pathMapping{from: m.MountPath, to: local})
	}
	if len(errs) > 0 {
		return nil, blockedBy(ReasonFailedMount, true, errors.Join(errs...))
	}
	return mounts, nil
}

// syncVolume materializes one volume in dir.
func (c *clusterRunner) syncVolume(ctx context.Context, inst *instance, namespace string, vol *corev1.Volume, dir string) error {
	var files map[string]volumeFile
	var err error
	switch {
	case vol.EmptyDir != nil:
		return os.MkdirAll(dir, 0o755)
	case vol.Secret != nil:
		s := vol.Secret
		files, err = c.projectObject(ctx, namespace, "Secret", s.SecretName, s.Items, s.DefaultMode, s.Optional)
	case vol.ConfigMap != nil:
		cm := vol.ConfigMap
		files, err = c.projectObject(ctx, namespace, "ConfigMap", cm.Name, cm.Items, cm.DefaultMode, cm.Optional)
	case vol.Projected != nil:
		files = map[string]volumeFile{}
		for _, src := range vol.Projected.Sources {
			var part map[string]volumeFile
			switch {
			case src.Secret != nil:
				part, err = c.projectObject(ctx, namespace, "Secret", src.Secret.Name, src.Secret.Items, vol.Projected.DefaultMode, src.Secret.Optional)
			case src.ConfigMap != nil:
				part, err = c.projectObject(ctx, namespace, "ConfigMap", src.ConfigMap.Name, src.ConfigMap.Items, vol.Projected.DefaultMode, src.ConfigMap.Optional)
			default:
				return errors.New("projected volumes may only hold secret and configMap sources in the component runner")
			}
			if err != nil {
				break
			}
			for p, f := range part {
				files[p] = f
			}
		}
	default:
		return errors.New("only emptyDir, secret, configMap and projected volumes are supported by the component runner")
	}
	if err != nil {
		if inst.mounted[vol.Name] {
			return nil // keep the last contents, as the kubelet does
		}
		return err
	}
	if err := writeVolume(dir, files); err != nil {
		return err
	}
	inst.mounted[vol.Name] = true
	return nil
}

// projectObject reads a Secret or ConfigMap and picks its volume files.
func (c *clusterRunner) projectObject(ctx context.Context, namespace, kind, name string, items []corev1.KeyToPath, defaultMode *int32, optional *bool) (map[string]volumeFile, error) {
	var data map[string][]byte
	var err error
	if kind == "Secret" {
		data, err = c.secretData(ctx, namespace, name)
	} else {
		data, err = c.configMapData(ctx, namespace, name)
	}
	err = describeMissing(err, kind, namespace, name)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	files, perr := projectVolume(data, err == nil, items, defaultMode, optional != nil && *optional)
	if perr != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", kind, namespace, name, perr)
	}
	return files, nil
}

// projectVolume picks the files of a Secret or ConfigMap volume from the
// object's data: every key, or only the listed items at their paths, with the
// item's mode, else defaultMode, else 0644. A missing object or key is an error
// unless optional, when it is simply left out.
func projectVolume(data map[string][]byte, exists bool, items []corev1.KeyToPath, defaultMode *int32, optional bool) (map[string]volumeFile, error) {
	files := map[string]volumeFile{}
	if !exists {
		if optional {
			return files, nil
		}
		return nil, errors.New("not found; waiting for it to be created")
	}
	mode := os.FileMode(defaultVolumeMode)
	if defaultMode != nil {
		mode = os.FileMode(*defaultMode) & fs.ModePerm
	}
	if len(items) == 0 {
		for k, v := range data {
			files[k] = volumeFile{data: v, mode: mode}
		}
		return files, nil
	}
	for _, item := range items {
		v, ok := data[item.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, fmt.Errorf("key %q not found", item.Key)
		}
		if !filepath.IsLocal(item.Path) {
			return nil, fmt.Errorf("item path %q is not a relative path inside the volume", item.Path)
		}
		m := mode
		if item.Mode != nil {
			m = os.FileMode(*item.Mode) & fs.ModePerm
		}
		files[filepath.Clean(item.Path)] = volumeFile{data: v, mode: m}
	}
	return files, nil
}

// writeVolume makes dir hold exactly files: changed files are replaced
// atomically, unchanged ones are left alone and others are removed.
func writeVolume(dir string, files map[string]volumeFile) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, rel := range paths {
		f, full := files[rel], filepath.Join(dir, rel)
		if cur, err := os.ReadFile(full); err == nil && bytes.Equal(cur, f.data) {
			if st, err := os.Stat(full); err == nil && st.Mode().Perm() == f.mode {
				continue
			}
		}
		if err := atomicfile.Write(full, f.data, f.mode); err != nil {
			return fmt.Errorf("write %s: %w", rel, err)
		}
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if _, ok := files[rel]; !ok {
			return os.Remove(p)
		}
		return nil
	})
}
