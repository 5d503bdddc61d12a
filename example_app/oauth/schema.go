package oauth

import "github.com/saguaro-go/saguaro/example_app/database"

// migrations is the authorization server's schema. Times are Unix
// seconds; secrets and tokens are stored as SHA-256 hashes, never as
// themselves.
var migrations = []database.Migration{{
	Version: 1,
	SQLite: `
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
	password_hash TEXT NOT NULL);`,
	Postgres: `
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
	password_hash TEXT NOT NULL);`,
}}
