package registry

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func startRegistry(t *testing.T, private bool) *Server {
	t.Helper()
	start := Start
	if private {
		start = StartPrivate
	}
	r, err := start(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(r.Stop)
	return r
}

func TestPrivateRegistryRequiresCredentials(t *testing.T) {
	r := startRegistry(t, true)
	creds := r.Credentials()
	require.NotNil(t, creds)
	other := startRegistry(t, true).Credentials()
	assert.NotEqual(t, creds.Password, other.Password, "every private registry has a password of its own")

	for _, tc := range []struct {
		name           string
		user, password string
		want           int
	}{
		{"no credentials", "", "", http.StatusUnauthorized},
		{"a wrong password", creds.Username, "wrong", http.StatusUnauthorized},
		{"a wrong user", "someone", creds.Password, http.StatusUnauthorized},
		{"its credentials", creds.Username, creds.Password, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+r.Host()+"/v2/", nil)
			require.NoError(t, err)
			if tc.user != "" {
				req.SetBasicAuth(tc.user, tc.password)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tc.want, resp.StatusCode)
			if tc.want == http.StatusUnauthorized {
				assert.Equal(t, `Basic realm="`+Realm+`"`, resp.Header.Get("WWW-Authenticate"), "the challenge a registry client answers with credentials")
			}
		})
	}
}

func TestCopyImageToThePrivateRegistry(t *testing.T) {
	pub, priv := startRegistry(t, false), startRegistry(t, true)
	img, err := random.Image(64, 1)
	require.NoError(t, err)
	src, err := storedRef(pub.Host(), name.MustParseReference("quay.io/kubectl-ocm/box:v1"))
	require.NoError(t, err)
	require.NoError(t, remote.Write(src, img))

	require.NoError(t, pub.CopyImageTo(t.Context(), "quay.io/kubectl-ocm/box:v1", priv, PrivateHost+"/kubectl-ocm/box:v1"))
	stored, err := name.ParseReference(priv.Host()+"/kubectl-ocm/box:v1", name.Insecure)
	require.NoError(t, err)
	_, err = remote.Get(stored)
	require.Error(t, err, "an anonymous pull from the private registry")
	assert.ErrorContains(t, err, "UNAUTHORIZED")
	got, err := remote.Image(stored, remote.WithAuth(&authn.Basic{Username: priv.creds.Username, Password: priv.creds.Password}))
	require.NoError(t, err)
	assertSameImage(t, img, got)

	err = pub.CopyImageTo(t.Context(), "quay.io/kubectl-ocm/box:v1", priv, "quay.io/kubectl-ocm/box:v1")
	assert.ErrorContains(t, err, "not in the private registry "+PrivateHost)
}

func TestDockerConfigJSON(t *testing.T) {
	var cfg struct {
		Auths map[string]struct{ Username, Password, Auth string }
	}
	require.NoError(t, json.Unmarshal(Credentials{Username: "u", Password: "p:w"}.DockerConfigJSON(), &cfg))
	require.Contains(t, cfg.Auths, PrivateHost)
	e := cfg.Auths[PrivateHost]
	assert.Equal(t, "u", e.Username)
	assert.Equal(t, "p:w", e.Password)
	assert.Equal(t, base64.StdEncoding.EncodeToString([]byte("u:p:w")), e.Auth)
}

// writeLayout writes an OCI layout holding img once per set of
// annotations, and returns its directory.
func writeLayout(t *testing.T, img v1.Image, annotations ...map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "layout")
	p, err := layout.Write(dir, empty.Index)
	require.NoError(t, err)
	for _, a := range annotations {
		require.NoError(t, p.AppendImage(img, layout.WithAnnotations(a)))
	}
	return dir
}

func TestLoad(t *testing.T) {
	img, err := random.Image(128, 2)
	require.NoError(t, err)
	dir := t.TempDir()
	saved := filepath.Join(dir, "saved.tar")
	require.NoError(t, tarball.MultiRefWriteToFile(saved, map[name.Reference]v1.Image{
		name.MustParseReference("example.test/tools/box:v1"): img,
		name.MustParseReference("busybox:dev"):               img,
	}))
	unnamed := filepath.Join(dir, "unnamed.tar")
	digest, err := img.Digest()
	require.NoError(t, err)
	byDigest, err := name.NewDigest("example.test/tools/box@" + digest.String())
	require.NoError(t, err)
	require.NoError(t, tarball.MultiRefWriteToFile(unnamed, map[name.Reference]v1.Image{byDigest: img}))
	private := filepath.Join(dir, "private.tar")
	require.NoError(t, tarball.WriteToFile(private, name.MustParseReference(PrivateHost+"/kubectl-ocm/box:v1"), img))
	garbage := filepath.Join(dir, "garbage.tar")
	require.NoError(t, os.WriteFile(garbage, []byte("not an archive"), 0o644))

	for _, tc := range []struct {
		name       string
		path       string
		repository string
		want       []string
		wantErr    string
	}{
		{name: "a docker save archive: each RepoTag", path: saved,
			want: []string{"example.test/tools/box:v1", "index.docker.io/library/busybox:dev"}},
		{name: "an OCI layout with full names", path: writeLayout(t, img, map[string]string{refNameAnnotation: "example.test/tools/box:v2"}),
			want: []string{"example.test/tools/box:v2"}},
		{name: "an OCI layout entry named by a tag, with a repository", path: writeLayout(t, img, map[string]string{refNameAnnotation: "v3"}),
			repository: "example.test/tools/box", want: []string{"example.test/tools/box:v3"}},
		{name: "an OCI layout entry named by a tag and by containerd", path: writeLayout(t, img, map[string]string{refNameAnnotation: "v4", containerdNameAnnotation: "example.test/tools/box:v4"}),
			want: []string{"example.test/tools/box:v4"}},
		{name: "an OCI layout entry named only by a tag", path: writeLayout(t, img, map[string]string{refNameAnnotation: "v5"}),
			wantErr: `"v5", is named only by a tag, and no repository was given`},
		{name: "an OCI layout entry without a name", path: writeLayout(t, img, map[string]string{refNameAnnotation: "example.test/tools/box:v6"}, nil),
			wantErr: "has no name (annotation " + refNameAnnotation + ")"},
		{name: "a docker save archive of an image without a name", path: unnamed,
			wantErr: "has no name: save it by name (docker save NAME:TAG)"},
		{name: "an image named in the private registry", path: private,
			wantErr: "is named in the private registry " + PrivateHost},
		{name: "a directory that is no OCI layout", path: dir, wantErr: "is not an OCI layout (no index.json)"},
		{name: "a file that is no archive", path: garbage, wantErr: "is neither an OCI layout directory nor a docker save archive"},
		{name: "a path that does not exist", path: filepath.Join(dir, "absent.tar"), wantErr: "no such file or directory"},
		{name: "a repository that is not one", path: saved, repository: "Not/A/Repo!", wantErr: `repository "Not/A/Repo!"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startRegistry(t, false)
			refs, err := Load(t.Context(), r.Host(), tc.path, tc.repository)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				assert.Empty(t, catalog(t, r), "nothing is loaded")
				return
			}
			require.NoError(t, err)
			var names []string
			for _, ref := range refs {
				names = append(names, ref.Name())
				stored, err := storedRef(r.Host(), ref)
				require.NoError(t, err)
				got, err := remote.Image(stored)
				require.NoError(t, err, "%s is stored", ref)
				assertSameImage(t, img, got)
			}
			assert.ElementsMatch(t, tc.want, names)
		})
	}
}

// catalog returns the repositories registry r holds.
func catalog(t *testing.T, r *Server) []string {
	t.Helper()
	reg, err := name.NewRegistry(r.Host(), name.Insecure)
	require.NoError(t, err)
	repos, err := remote.Catalog(t.Context(), reg)
	require.NoError(t, err)
	return repos
}

func assertSameImage(t *testing.T, want, got v1.Image) {
	t.Helper()
	w, err := want.ConfigName()
	require.NoError(t, err)
	g, err := got.ConfigName()
	require.NoError(t, err)
	assert.Equal(t, w, g, "the same image (config digest)")
}
