package cli

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/kubectl-ocm/kubectl-ocm/config/valuesfile"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
)

// ImagePullCredentialsFlag is the flag of the verbs that install an
// operator: a docker config.json written into the image pull Secret.
const ImagePullCredentialsFlag = "image-pull-credentials"

// AddImagePullCredentialsFlag registers --image-pull-credentials, the file
// of the docker config.json the verb writes into the Secret
// open-cluster-management-image-pull-credentials of namespace, the
// operator's (ReadImagePullCredentials reads it).
func AddImagePullCredentialsFlag(fs *pflag.FlagSet, file *string, namespace string) {
	fs.StringVar(file, ImagePullCredentialsFlag, *file, fmt.Sprintf(
		"A docker config.json ({\"auths\":{...}}, as `docker login` writes it) with the credentials of a private registry or mirror: written into the Secret %s/%s, which the operator and everything it deploys pull their images with (see docs/hardening.md#private-registries-and-mirrors).",
		namespace, pullsecret.Name))
}

// ReadImagePullCredentials reads and checks the file of
// --image-pull-credentials (pullsecret.Validate); nil for no file. The
// error names the flag, the file and what is wrong.
func ReadImagePullCredentials(file string) ([]byte, error) {
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--%s: cannot read %s: %w", ImagePullCredentialsFlag, file, err)
	}
	if err := pullsecret.Validate(file, data); err != nil {
		return nil, fmt.Errorf("--%s: %w", ImagePullCredentialsFlag, err)
	}
	return data, nil
}

// PullCredentials returns the docker config.json of --image-pull-credentials
// (file) or, without it, the one images, a values file's images section,
// names for registry; nil when neither has one (images may be nil).
func PullCredentials(file string, images *valuesfile.Images, registry string) ([]byte, error) {
	data, err := ReadImagePullCredentials(file)
	if err != nil || data != nil || images == nil {
		return data, err
	}
	return images.PullCredentials(registry)
}
