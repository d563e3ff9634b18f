import { useState, type FormEvent } from 'react';
import { api } from '../api';
import { signupHref } from '../route';
import { ErrorText, messagesOf } from './ErrorText';

interface Props {
  onLogin: (username: string) => void;
}

export function LoginForm({ onLogin }: Props) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setErrors([]);
    try {
      const result = await api.login(username, password);
      onLogin(result.username);
    } catch (error) {
      setErrors(messagesOf(error));
      setBusy(false);
    }
  }

  return (
    <form className="card login" onSubmit={submit}>
      <h1>Sign in</h1>
      <label>
        Username
        <input
          data-testid="login-username"
          name="username"
          autoComplete="username"
          autoFocus
          value={username}
          onChange={(e) => setUsername(e.target.value)}
        />
      </label>
      <label>
        Password
        <input
          data-testid="login-password"
          name="password"
          type="password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
      </label>
      <ErrorText messages={errors} testId="login-error" />
      <button type="submit" className="primary" data-testid="login-submit" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
      <p className="muted">
        New here?{' '}
        <a href={signupHref} data-testid="to-signup">
          Create an account
        </a>
      </p>
    </form>
  );
}
