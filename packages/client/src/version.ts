/** The package's version, the same as the API's (`info.version` of /openapi.json). */
export const VERSION = '0.1.0';
