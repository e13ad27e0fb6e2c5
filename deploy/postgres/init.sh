#!/bin/sh
# First start of the compose stack's PostgreSQL (docker-entrypoint-initdb.d), as the superuser:
# pgvector in template1's schema `extensions` (every database made later, each project's included, inherits it;
# the extension is not trusted, so Tessera's role could not create it), and Tessera's own role, which is not a
# superuser: it may create databases and roles (one of each per project) and nothing more.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname template1 <<'SQL'
create schema if not exists extensions;
create extension if not exists vector schema extensions;
grant usage on schema extensions to public;
SQL
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres -v password="$TESSERA_DB_PASSWORD" <<'SQL'
create role tessera with login createdb createrole password :'password';
create database tessera owner tessera;
SQL
