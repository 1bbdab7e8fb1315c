package githubtest

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// appKey returns the public key set for App appID, or nil.
func (s *Server) appKey(appID int64) *rsa.PublicKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appKeys[appID]
}

// verifyJWT checks an App's JWT as GitHub does: RS256, signed by the
// App's key, issued by the App ("iss", a number or a string), not yet
// expired, and valid for at most ten minutes. It returns the App's ID.
// When the JWT is not valid, problem is the message of GitHub's 401 answer.
func verifyJWT(token string, key func(appID int64) *rsa.PublicKey, now time.Time) (appID int64, problem string) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return 0, "A JSON web token could not be decoded"
	}
	var header struct {
		Alg string `json:"alg"`
	}
	var claims struct {
		Iss json.RawMessage `json:"iss"`
		Iat int64           `json:"iat"`
		Exp int64           `json:"exp"`
	}
	if decodePart(parts[0], &header) != nil || decodePart(parts[1], &claims) != nil {
		return 0, "A JSON web token could not be decoded"
	}
	if header.Alg != "RS256" {
		return 0, fmt.Sprintf("'alg' must be RS256, not %q", header.Alg)
	}
	iss := strings.Trim(string(claims.Iss), `"`)
	appID, err := strconv.ParseInt(iss, 10, 64)
	if err != nil {
		return 0, "'Issuer' claim ('iss') must be an Integer"
	}
	pub := key(appID)
	if pub == nil {
		return 0, fmt.Sprintf("Integration not found: no key configured for App %d", appID)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return 0, "A JSON web token could not be decoded"
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig) != nil {
		return 0, "A JSON web token could not be decoded: the signature does not match the App's public key"
	}
	switch {
	case claims.Exp <= now.Unix():
		return 0, "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"
	case claims.Iat > now.Add(time.Minute).Unix():
		return 0, "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"
	case claims.Exp-claims.Iat > 600:
		return 0, "'Expiration time' claim ('exp') is too far in the future"
	}
	return appID, ""
}

func decodePart(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
