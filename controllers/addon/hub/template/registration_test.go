package template

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/stretchr/testify/require"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

// currentCluster is a CurrentCluster hub permission.
func currentCluster(role string) addonv1alpha1.HubPermissionConfig {
	return addonv1alpha1.HubPermissionConfig{Type: addonv1alpha1.HubPermissionsBindingCurrentCluster,
		CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: role}}
}

// singleNamespace is a SingleNamespace hub permission.
func singleNamespace(ns, kind, name string) addonv1alpha1.HubPermissionConfig {
	return addonv1alpha1.HubPermissionConfig{Type: addonv1alpha1.HubPermissionsBindingSingleNamespace,
		SingleNamespace: &addonv1alpha1.SingleNamespaceBindingConfig{Namespace: ns, RoleRef: rbacv1.RoleRef{Kind: kind, Name: name}}}
}

func TestRegistrations(t *testing.T) {
	user := "system:open-cluster-management:cluster:cluster1:addon:hello:agent:hello-agent"
	groups := []string{"system:open-cluster-management:cluster:cluster1:addon:hello", "system:open-cluster-management:addon:hello", "system:authenticated"}
	custom := &addonv1alpha1.Subject{User: "me", Groups: []string{"us"}}
	cases := []struct {
		name   string
		driver string
		b      func(templateBuilder) templateBuilder
		want   []addonv1alpha1.RegistrationConfig
	}{
		{name: "none", b: func(b templateBuilder) templateBuilder { return b }, want: []addonv1alpha1.RegistrationConfig{}},
		{name: "KubeClient, once however often listed", b: func(b templateBuilder) templateBuilder { return b.kubeClient().kubeClient() },
			want: []addonv1alpha1.RegistrationConfig{{SignerName: addonv1alpha1.KubeAPIServerClientSignerName,
				Subject: addonv1alpha1.Subject{User: user, Groups: groups}}}},
		{name: "custom signers, with the default or their own subject",
			b: func(b templateBuilder) templateBuilder {
				return b.customSigner("example.com/a", nil).customSigner("example.com/b", custom).kubeClient()
			},
			want: []addonv1alpha1.RegistrationConfig{
				{SignerName: "example.com/a", Subject: addonv1alpha1.Subject{User: user, Groups: groups}},
				{SignerName: "example.com/b", Subject: *custom},
				{SignerName: addonv1alpha1.KubeAPIServerClientSignerName, Subject: addonv1alpha1.Subject{User: user, Groups: groups}},
			}},
		{name: "token driver: the ServiceAccount's user for KubeClient only", driver: addonv1alpha1.KubeClientDriverToken,
			b: func(b templateBuilder) templateBuilder { return b.customSigner("example.com/a", nil).kubeClient() },
			want: []addonv1alpha1.RegistrationConfig{
				{SignerName: "example.com/a", Subject: addonv1alpha1.Subject{User: user, Groups: groups}},
				{SignerName: addonv1alpha1.KubeAPIServerClientSignerName, Subject: addonv1alpha1.Subject{User: "system:serviceaccount:cluster1:hello-agent"}},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Registrations("cluster1", "hello", tc.driver, tc.b(newTemplate(t, agentDeployment)).t)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Registrations = %s\nwant %s", toJSON(got), toJSON(tc.want))
			}
		})
	}
}

func TestPermissionBindings(t *testing.T) {
	subject := []rbacv1.Subject{
		{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:open-cluster-management:cluster:cluster1:addon:hello"},
		{Kind: rbacv1.ServiceAccountKind, Namespace: "cluster1", Name: "hello-agent"},
	}
	labels := map[string]string{"open-cluster-management.io/addon-name": "hello",
		"open-cluster-management.io/addon-template-name": "hello-template", "open-cluster-management.io/cluster-name": "cluster1"}
	type binding struct {
		namespace, name string
		role            rbacv1.RoleRef
	}
	cases := []struct {
		name    string
		perms   []addonv1alpha1.HubPermissionConfig
		want    []binding
		wantErr string
	}{{
		name: "none",
	}, {
		name:  "CurrentCluster binds the ClusterRole in the cluster namespace; SingleNamespace binds its role in its namespace",
		perms: []addonv1alpha1.HubPermissionConfig{currentCluster("reader"), singleNamespace("shared", "Role", "writer"), singleNamespace("other", "ClusterRole", "viewer")},
		want: []binding{
			{"cluster1", "open-cluster-management:hello:clusterrole:agent", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "reader"}},
			{"shared", "open-cluster-management:hello:role:agent", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "writer"}},
			{"other", "open-cluster-management:hello:clusterrole:agent", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "viewer"}},
		},
	}, {
		name:    "CurrentCluster without its settings",
		perms:   []addonv1alpha1.HubPermissionConfig{{Type: addonv1alpha1.HubPermissionsBindingCurrentCluster}},
		wantErr: "hubPermissions[0]: type CurrentCluster needs currentCluster.clusterRoleName",
	}, {
		name:    "SingleNamespace without its settings",
		perms:   []addonv1alpha1.HubPermissionConfig{{Type: addonv1alpha1.HubPermissionsBindingSingleNamespace}},
		wantErr: "type SingleNamespace needs singleNamespace.namespace",
	}, {
		name:    "SingleNamespace with a roleRef of another kind",
		perms:   []addonv1alpha1.HubPermissionConfig{singleNamespace("shared", "User", "x")},
		wantErr: "must name a Role or ClusterRole",
	}, {
		name:    "two bindings of one name",
		perms:   []addonv1alpha1.HubPermissionConfig{currentCluster("a"), singleNamespace("cluster1", "ClusterRole", "b")},
		wantErr: "hubPermissions[0] and spec.registration[0].kubeClient.hubPermissions[1] both make RoleBinding cluster1/open-cluster-management:hello:clusterrole:agent",
	}, {
		name:    "unknown type",
		perms:   []addonv1alpha1.HubPermissionConfig{{Type: "Everywhere"}},
		wantErr: `unknown type "Everywhere"`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PermissionBindings("cluster1", "hello", newTemplate(t, agentDeployment).kubeClient(tc.perms...).t)
			if tc.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidHubPermission)
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var bindings []binding
			for _, rb := range got {
				bindings = append(bindings, binding{rb.Namespace, rb.Name, rb.RoleRef})
				if !reflect.DeepEqual(rb.Subjects, subject) || !reflect.DeepEqual(rb.Labels, labels) || len(rb.OwnerReferences) != 0 {
					t.Errorf("RoleBinding %s/%s: subjects %v labels %v owners %v", rb.Namespace, rb.Name, rb.Subjects, rb.Labels, rb.OwnerReferences)
				}
			}
			if !reflect.DeepEqual(bindings, tc.want) {
				t.Errorf("bindings %v\nwant %v", bindings, tc.want)
			}
		})
	}
}
