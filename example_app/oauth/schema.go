package oauth

import "github.com/saguaro-go/saguaro/example_app/database"

// migrations is the authorization server's schema, the same SQL on
// SQLite and PostgreSQL. Times are Unix seconds; secrets and tokens are
// stored as SHA-256 hashes, never as themselves.
//
// Version 2: a pending request counts its failed sign-ins; a client has a
// kind (first_party, dynamic, document) and the time it was last used, so
// that abandoned registrations can go; a refresh token carries its
// family's absolute expiry; signing keys live in a table of their own, so
// that they can rotate (keys.go moves the version 1 key there).
var migrations = []database.Migration{
	{Version: 1, SQLite: schemaV1, Postgres: schemaV1},
	{Version: 2, SQLite: schemaV2, Postgres: schemaV2},
}

const schemaV1 = `
CREATE TABLE oauth_clients (
	id TEXT PRIMARY KEY,
	secret_hash TEXT NOT NULL DEFAULT '',
	metadata TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL DEFAULT 0);
CREATE TABLE oauth_requests (
	id TEXT PRIMARY KEY,
	client_id TEXT NOT NULL,
	data TEXT NOT NULL,
	subject TEXT NOT NULL DEFAULT '',
	auth_time BIGINT NOT NULL DEFAULT 0,
	state TEXT NOT NULL DEFAULT 'pending',
	code_hash TEXT UNIQUE,
	code_at BIGINT NOT NULL DEFAULT 0,
	created_at BIGINT NOT NULL);
CREATE TABLE oauth_refresh_tokens (
	token_hash TEXT PRIMARY KEY,
	family TEXT NOT NULL,
	client_id TEXT NOT NULL,
	subject TEXT NOT NULL,
	scopes TEXT NOT NULL,
	audience TEXT NOT NULL,
	auth_time BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	used BOOLEAN NOT NULL DEFAULT FALSE);
CREATE INDEX oauth_refresh_tokens_family ON oauth_refresh_tokens (family);
CREATE TABLE oauth_secrets (
	name TEXT PRIMARY KEY,
	value TEXT NOT NULL);
CREATE TABLE oauth_users (
	name TEXT PRIMARY KEY,
	password_hash TEXT NOT NULL);`

const schemaV2 = `
ALTER TABLE oauth_requests ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE oauth_clients ADD COLUMN kind TEXT NOT NULL DEFAULT 'dynamic';
ALTER TABLE oauth_clients ADD COLUMN last_used_at BIGINT NOT NULL DEFAULT 0;
UPDATE oauth_clients SET kind = 'document' WHERE expires_at <> 0;
ALTER TABLE oauth_refresh_tokens ADD COLUMN family_expires_at BIGINT NOT NULL DEFAULT 0;
UPDATE oauth_refresh_tokens SET family_expires_at = expires_at;
CREATE INDEX oauth_requests_created ON oauth_requests (created_at);
CREATE INDEX oauth_refresh_tokens_expires ON oauth_refresh_tokens (expires_at);
CREATE INDEX oauth_clients_kind ON oauth_clients (kind, last_used_at);
CREATE TABLE oauth_signing_keys (
	id TEXT PRIMARY KEY,
	private_key TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	retired_at BIGINT NOT NULL DEFAULT 0);`
