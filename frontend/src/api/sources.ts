// Circuits from SQL and Datalog text, and a circuit's SQL (docs/api.md: "Circuits from
// SQL and Datalog").

import { request, type ApiSchemas } from '../api';
import type { Doc, Schemas } from '../editor/model';
import type { SourceProblem } from '../sources/spans';

/** `POST /api/sql/compile/` and `/api/datalog/compile/`. The schema types `document` (a JSON
 * field), `errors` and `schemas` (bare dicts) loosely: their shapes are spelled out here. */
export type Compiled = Omit<ApiSchemas['CompiledSource'], 'document' | 'errors' | 'schemas'> & {
  document: Doc | null;
  errors: SourceProblem[];
  schemas: Schemas;
};

/** `POST /api/sql/export/`; `errors` spelled out as for Compiled. */
export type ExportedSql = Omit<ApiSchemas['ExportedSql'], 'errors'> & { errors: SourceProblem[] };

export const sourcesApi = {
  compileSql: (text: string) => request<Compiled>('POST', '/api/sql/compile/', { text }),
  compileDatalog: (text: string) => request<Compiled>('POST', '/api/datalog/compile/', { text }),
  exportSql: (document: Doc) => request<ExportedSql>('POST', '/api/sql/export/', { document }),
};
