// One pino logger for the process; request loggers are children carrying request id, project, operation.
import { pino, type Logger } from 'pino';

export type { Logger };

/** Creates the process logger; secrets in well-known fields are redacted. */
export function createLogger(level: string, name = 'tessera'): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: [
        'password',
        '*.password',
        'secret',
        '*.secret',
        'api_key',
        '*.api_key',
        'apiKey',
        '*.apiKey',
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        'headers.authorization',
        'headers["x-api-key"]',
        'refresh_token',
        '*.refresh_token',
        'access_token',
        '*.access_token',
        'client_secret',
        '*.client_secret',
      ],
      censor: '[redacted]',
    },
  });
}
