import { walkInChinese } from './chinese-walk.js';

// A phone in the dark theme: no page wider than 390 px, the dark background on every page.
walkInChinese({ name: 'zh-390-dark', width: 390, colorScheme: 'dark' });
