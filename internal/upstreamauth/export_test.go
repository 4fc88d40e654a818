package upstreamauth

import "context"

// SecretsOf opens the stored tokens of an authorized source, as the tests' view of what
// only this package sees.
func (m *Manager) SecretsOf(ctx context.Context, name string) (access, refresh string, err error) {
	_, sec, err := m.authorized(ctx, name)
	return sec.AccessToken, sec.RefreshToken, err
}
