import { ApiError } from '../api';

/** Readable lines for anything thrown by the API client (or elsewhere). */
export function messagesOf(error: unknown): string[] {
  if (error instanceof ApiError) return error.messages;
  if (error instanceof Error) return [error.message];
  return [String(error)];
}

interface Props {
  messages: string[];
  testId?: string;
}

export function ErrorText({ messages, testId }: Props) {
  if (messages.length === 0) return null;
  return (
    <div className="error" role="alert" data-testid={testId}>
      {messages.length === 1 ? (
        messages[0]
      ) : (
        <ul>
          {messages.map((m, i) => (
            <li key={i}>{m}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
