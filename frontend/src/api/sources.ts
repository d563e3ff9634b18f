// Circuits from SQL and Datalog text, and a circuit's SQL (docs/api.md: "Circuits from
// SQL and Datalog").

import { request } from '../api';
import type { Doc, Schemas } from '../editor/model';
import type { SourceProblem } from '../sources/spans';

export interface Compiled {
  valid: boolean;
  document: Doc | null;
  errors: SourceProblem[];
  schemas: Schemas;
}

export const sourcesApi = {
  compileSql: (text: string) => request<Compiled>('POST', '/api/sql/compile/', { text }),
  compileDatalog: (text: string) => request<Compiled>('POST', '/api/datalog/compile/', { text }),
  exportSql: (document: Doc) => request<{ sql: string | null; errors: SourceProblem[] }>('POST', '/api/sql/export/', { document }),
};
