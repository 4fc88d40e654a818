package upstreamauth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the size of a secret key: AES-256.
const KeySize = 32

// Keyring seals and opens the secrets of sources' authorizations with AES-256-GCM. Its first
// key seals; every key opens what it sealed, found by the key id stored beside the
// ciphertext (the first 8 bytes of the key's SHA-256, in hex), so that keys rotate by
// putting the new one first and keeping the old ones until Manager.Reencrypt has re-sealed
// everything under the new one.
type Keyring struct {
	keys []sealKey
}

type sealKey struct {
	id   string
	aead cipher.AEAD
}

// ParseKeys reads TOOLGATE_SECRET_KEYS: comma-separated keys of 32 bytes in base64
// (standard or URL alphabet, padded or not). An empty value is no keyring (nil).
func ParseKeys(s string) (*Keyring, error) {
	var k Keyring
	seen := map[string]bool{}
	for i, field := range strings.Split(s, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		raw, err := decodeKey(field)
		if err != nil || len(raw) != KeySize {
			return nil, fmt.Errorf("key %d: want %d random bytes in base64 (e.g. `openssl rand -base64 32`)", i+1, KeySize)
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(raw)
		id := hex.EncodeToString(sum[:8])
		if seen[id] {
			return nil, fmt.Errorf("key %d is listed twice", i+1)
		}
		seen[id] = true
		k.keys = append(k.keys, sealKey{id: id, aead: aead})
	}
	if len(k.keys) == 0 {
		return nil, nil
	}
	return &k, nil
}

func decodeKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if raw, err := enc.DecodeString(s); err == nil {
			return raw, nil
		}
	}
	return nil, errors.New("not base64")
}

// NewKey is a fresh random key in the form ParseKeys reads.
func NewKey() string {
	raw := make([]byte, KeySize)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails
	return base64.StdEncoding.EncodeToString(raw)
}

// Primary is the id of the key that seals.
func (k *Keyring) Primary() string { return k.keys[0].id }

// Seal encrypts plain under the primary key; aad (the row it belongs to) must be given
// again to open it, so that a ciphertext copied into another row does not open there.
func (k *Keyring) Seal(plain, aad []byte) (keyID string, sealed []byte) {
	key := k.keys[0]
	nonce := make([]byte, key.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return key.id, key.aead.Seal(nonce, nonce, plain, aad)
}

// KeyMissingError is a secret sealed under a key the keyring does not hold (removed from
// TOOLGATE_SECRET_KEYS before everything was re-sealed).
type KeyMissingError struct{ KeyID string }

func (e *KeyMissingError) Error() string {
	return fmt.Sprintf("the secret is sealed under key %s, which TOOLGATE_SECRET_KEYS does not hold", e.KeyID)
}

// errOpen is a ciphertext that does not open: altered, or moved from another row.
var errOpen = errors.New("the sealed secret does not open (altered, or not this row's)")

// Open decrypts what Seal sealed under keyID with the same aad.
func (k *Keyring) Open(keyID string, sealed, aad []byte) ([]byte, error) {
	for _, key := range k.keys {
		if key.id != keyID {
			continue
		}
		n := key.aead.NonceSize()
		if len(sealed) < n {
			return nil, errOpen
		}
		plain, err := key.aead.Open(nil, sealed[:n], sealed[n:], aad)
		if err != nil {
			return nil, errOpen
		}
		return plain, nil
	}
	return nil, &KeyMissingError{KeyID: keyID}
}

// String names the keys by id only, so that printing settings never shows a key.
func (k *Keyring) String() string {
	ids := make([]string, len(k.keys))
	for i, key := range k.keys {
		ids[i] = key.id
	}
	return "keys(" + strings.Join(ids, ",") + ")"
}

// GoString is String, for %#v.
func (k *Keyring) GoString() string { return k.String() }
