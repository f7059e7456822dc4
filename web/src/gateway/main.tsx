import { render } from 'preact';
render(<p>gateway</p>, document.getElementById('app')!);
