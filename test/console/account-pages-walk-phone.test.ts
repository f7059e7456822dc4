import { walkAccountPages } from './account-pages-walk.js';

// A phone in the dark theme: no page wider than 390 px, the dark background, in English and in Chinese.
walkAccountPages({ name: '390-dark', width: 390, colorScheme: 'dark' }, { english: true });
